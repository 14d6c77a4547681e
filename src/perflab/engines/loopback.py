"""Servers that engines start for one run on the loopback interface: sshd, redis-server, and
the delaying relay that stands for the network in front of one of them (``Relay``).

Each server is a child of the measured process (so the supervisor's tree, and its CPU
accounting, include it and everything it forks), runs in the foreground (never daemonised),
and is stopped by PID — its own descendants first (sshd's per-connection processes), then
the server. If the run is killed instead, the supervisor's tree kill reaches them all.

Other local users share the loopback interface (issue 24): each server admits only its own
run (sshd: this user's throwaway key, from 127.0.0.1; redis: a per-run password), and its
files live in a 0700 directory that no other user can change (``private_dir``), written
0600 without following links an attacker could have planted (``write_private``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from perflab import files
from perflab.errors import PerflabError

#: Seconds a server gets to start listening before the run fails.
START_TIMEOUT_S = 15.0
#: Seconds between SIGTERM and SIGKILL when stopping a server.
STOP_GRACE_S = 2.0


class ServerError(RuntimeError):
    """A server did not start: the run fails with this message (never hangs)."""


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (the server binds it next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def private_dir(path: Path) -> Path:
    """``path`` made private (``files.private_dir``); ServerError if another user could put
    his own files in it (the run fails, naming the directory)."""
    try:
        return files.private_dir(path)
    except PerflabError as exc:
        raise ServerError(str(exc)) from None


def sshd_accepts(path: Path, home: str) -> bool:
    """Whether sshd's StrictModes accepts ``path`` as an authorized-keys file: every
    directory above it root's or the user's and not group/other-writable, up to the
    user's home directory (if it is under it) or /. A sticky bit does not help (/tmp)."""
    uid = os.geteuid()
    path, home_dir = Path(os.path.realpath(path)), Path(os.path.realpath(home))
    for parent in path.parents:
        st = parent.stat()
        if st.st_uid not in (0, uid) or st.st_mode & 0o022:
            return False
        if parent == home_dir:
            break
    return True


def _create_private(path: Path, mode: int = 0o600) -> int:
    """A new file at ``path``, open for writing: whatever was there (a link someone planted)
    is removed, never followed, and the file is created exclusively with ``mode``."""
    path.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, mode)


def write_private(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Write ``data`` to a new file ``path`` that only this user can read (``mode``)."""
    with os.fdopen(_create_private(path, mode), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def stop_pids(
    pids: list[int], grace_s: float = STOP_GRACE_S, first: signal.Signals = signal.SIGTERM
) -> None:
    """Send ``first`` (SIGTERM; SIGHUP for interactive shells, which ignore SIGTERM) to each
    process, then SIGKILL those alive after ``grace_s`` — by PID, never by name."""
    procs = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            p = psutil.Process(pid)
            p.send_signal(first)
            procs.append(p)
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=grace_s)


class Server:
    """A foreground server process started by this process, listening on ``port``."""

    label = "server"

    def __init__(self, workdir: Path, port: int = 0) -> None:
        self.workdir = workdir
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / f"{self.label}-{self.port}.log"

    def argv(self) -> list[str]:
        """The server's command line (its configuration files written, 0600)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the server and wait until it accepts connections (ServerError if not, or if
        its directory is one another user could change: see ``private_dir``)."""
        self.workdir = private_dir(self.workdir)
        self.log = self.workdir / self.log.name
        if port_open(self.port):
            raise ServerError(f"{self.label}: port 127.0.0.1:{self.port} is already in use")
        argv = self.argv()
        with os.fdopen(_create_private(self.log), "wb") as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not port_open(self.port):
            if self.proc.poll() is not None:
                raise ServerError(
                    f"{self.label} exited with code {self.proc.returncode} on port "
                    f"{self.port}: {self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"{self.label} did not listen on port {self.port} in time")
            time.sleep(0.05)

    def log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace").strip()[-600:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server's descendants, then the server, by PID."""
        if self.proc is None:
            return
        try:
            kids = [c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)]
        except psutil.Error:
            kids = []
        stop_pids([*kids, self.proc.pid])
        self.proc.wait()
        self.proc = None


def _binary(name: str, *dirs: str) -> str:
    path = shutil.which(name) or next(
        (f"{d}/{name}" for d in dirs if os.access(f"{d}/{name}", os.X_OK)), None
    )
    if path is None:
        raise ServerError(f"{name} is not installed (scripts/setup installs it)")
    return path


class Sshd(Server):
    """OpenSSH's sshd on 127.0.0.1:port with a throwaway host key and user key.

    The client side is configured by ``ssh_config`` in the same directory; ``client_bin``
    holds ``ssh``/``scp``/``sftp`` wrappers that use it, to be put first on PATH (OpenSSH
    reads ``~/.ssh/config`` from the passwd entry, not from $HOME, so a file is the only way
    to keep the user's own configuration out of the measurement).

    Only this user, with the run's key, from 127.0.0.1, gets in (``StrictModes yes``,
    ``AllowUsers``, a ``from=`` key without forwarding). StrictModes refuses an
    authorized-keys file under a directory others can write, sticky or not: a run under
    /tmp or /dev/shm keeps that one file in a private directory of the user's instead
    (``$XDG_RUNTIME_DIR`` or ``~/.cache/perflab``), removed when the server stops.
    """

    label = "sshd"

    def __init__(self, workdir: Path, port: int = 0) -> None:
        super().__init__(workdir, port)
        # the passwd entry, as sshd sees it ($USER/$LOGNAME may say anything)
        entry = pwd.getpwuid(os.geteuid())
        self.user, self.home = entry.pw_name, entry.pw_dir
        self.key = workdir / "id_ed25519"
        self.config = workdir / "ssh_config"
        self.config_file = workdir / f"sshd_config_{self.port}"
        self.client_bin = workdir / "bin"
        self.authorized_keys = workdir / f"authorized_keys_{self.port}"
        self._keys_dir: Path | None = None  # a private directory of ours, outside workdir
        self._control_dir: Path | None = None  # ssh's connection-sharing sockets

    def argv(self) -> list[str]:
        return [_binary("sshd", "/usr/sbin"), "-D", "-e", "-f", str(self.sshd_config())]

    def sshd_config(self) -> Path:
        """Write the keys, the server's configuration and the client's; the config's path."""
        d = self.workdir  # resolved and private (start)
        self.key, self.config, self.client_bin = d / self.key.name, d / "ssh_config", d / "bin"
        host_key = d / f"host_key_{self.port}"
        if not host_key.exists():
            _keygen(host_key)
        if not self.key.exists():  # the first server in this directory: the client's side
            _keygen(self.key)
            self._client_config()
        self.authorized_keys = self._keys_file()
        # the key works from loopback only, and for nothing but sessions (saga needs no
        # forwarding: connection sharing is a feature of the client, not a forward)
        restrict = 'from="127.0.0.1",no-agent-forwarding,no-X11-forwarding,no-port-forwarding'
        pub = self.key.with_suffix(".pub").read_text().strip()
        write_private(self.authorized_keys, f"{restrict} {pub}\n")
        if os.geteuid() == 0:
            # sshd's privilege-separation directory (Debian makes it at boot via systemd).
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.config_file = d / f"sshd_config_{self.port}"
        (home := d / "home").mkdir(mode=0o700, exist_ok=True)
        keys = str(self.authorized_keys).replace("%", "%%")  # sshd expands %h, %u there
        write_private(
            self.config_file,
            f"ListenAddress 127.0.0.1:{self.port}\n"
            f"HostKey {_quoted(host_key)}\n"
            f"AuthorizedKeysFile {_quoted(keys)}\n"
            f"AllowUsers {self.user}\n"
            "StrictModes yes\nUsePAM no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            "AuthenticationMethods publickey\n"
            "AllowTcpForwarding no\nAllowStreamLocalForwarding no\nAllowAgentForwarding no\n"
            "X11Forwarding no\nPermitTunnel no\n"
            "PermitRootLogin prohibit-password\nPidFile none\nLogLevel ERROR\n"
            # the session limit is per connection (MaxSessions 10): keep it as Debian has it
            "MaxStartups 100:30:200\nSubsystem sftp internal-sftp\n"
            # PERFLAB_SSHD_DIR marks a session's processes as this run's (tests, shutdown);
            # an empty HOME keeps the user's start-up files out of saga's login shell: not
            # measured, and unable to hang it (pyenv's init waits a minute on a stale lock)
            f"SetEnv {_quoted(f'PERFLAB_SSHD_DIR={d}')} {_quoted(f'HOME={home}')}\n",
        )
        return self.config_file

    def _keys_file(self) -> Path:
        """Where this server's authorized keys go: the run's directory if sshd accepts it,
        else a new private directory under the first base that sshd accepts."""
        if self._keys_dir is not None:  # started before (and not stopped)
            return self._keys_dir / "authorized_keys"
        here = self.workdir / f"authorized_keys_{self.port}"
        if sshd_accepts(here, self.home):
            return here
        cache = Path(self.home, ".cache", "perflab")
        for base in (os.environ.get("XDG_RUNTIME_DIR", ""), str(cache)):
            if base == str(cache):  # each level 0700: a umask of 002 would leave it 0775
                for level in (cache.parent, cache):
                    with contextlib.suppress(OSError):  # exists, or no home: see below
                        level.mkdir(mode=0o700)
            if base and os.path.isdir(base) and sshd_accepts(Path(base, "k"), self.home):
                _sweep_dead_dirs(Path(base), "sshd")
                prefix = f"sshd-{os.getpid()}-"
                self._keys_dir = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
                return self._keys_dir / "authorized_keys"
        raise ServerError(
            f"sshd (StrictModes) refuses authorized_keys under {self.workdir}, and neither "
            f"$XDG_RUNTIME_DIR nor {self.home}/.cache/perflab is private to this user"
        )

    def _client_config(self) -> None:
        """ssh_config and the ssh/scp/sftp wrappers, for every server in this directory.

        radical.saga asks ssh for ``ControlPath=/tmp/saga_ssh_<user>_%h_%p.ctrl``, and ssh
        first connects to whatever listens there: another user's socket would be handed
        the session. The wrappers name a socket in a private directory instead, before
        saga's options (ssh takes the first value it is given). Its path must stay short
        (a socket's name has 108 bytes): a run directory may not be, so it is in $TMPDIR.
        """
        _sweep_dead_dirs(Path(tempfile.gettempdir()), "perflab-ssh")
        prefix = f"perflab-ssh-{os.getpid()}-"
        self._control_dir = private_dir(Path(tempfile.mkdtemp(prefix=prefix)))
        control = f"ControlPath={self._control_dir}/%C"
        write_private(
            self.config,
            "Host *\n"
            f"  IdentityFile {_quoted(self.key)}\n  IdentitiesOnly yes\n"
            "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
            "  BatchMode yes\n  ConnectTimeout 5\n  LogLevel ERROR\n",
        )
        self.client_bin.mkdir(mode=0o700, exist_ok=True)
        for tool in ("ssh", "scp", "sftp"):
            exe, cfg = shlex.quote(_binary(tool, "/usr/bin")), shlex.quote(str(self.config))
            line = f'exec {exe} -F {cfg} -o {shlex.quote(control)} "$@"'
            write_private(self.client_bin / tool, f"#!/bin/sh\n{line}\n", 0o700)

    def stop(self) -> None:
        """Stop the server (see Server.stop), then remove its private directories."""
        super().stop()
        for d in (self._keys_dir, self._control_dir):
            if d is not None:
                shutil.rmtree(d, ignore_errors=True)
        self._keys_dir = self._control_dir = None


def _sweep_dead_dirs(base: Path, kind: str) -> None:
    """Remove this user's directories ``base/<kind>-PID-*`` of processes that are gone: a
    run killed outright (SIGKILL) never stopped its sshd the normal way."""
    for d in base.glob(f"{kind}-*-*"):
        pid = d.name[len(kind) + 1 :].split("-")[0]
        with contextlib.suppress(OSError):
            mine = d.lstat().st_uid == os.geteuid() and stat.S_ISDIR(d.lstat().st_mode)
            if mine and pid.isdigit() and not psutil.pid_exists(int(pid)):
                shutil.rmtree(d, ignore_errors=True)


def _quoted(value: str | Path) -> str:
    """A value for an sshd, ssh or redis config line: double-quoted, so spaces stay in one
    argument (the three read backslash escapes in quotes differently: none is allowed)."""
    text = str(value)
    if any(c in text for c in '"\\\n'):
        raise ServerError(f"cannot put {text!r} in a server's configuration file")
    return f'"{text}"'


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "perflab", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )


class RedisServer(Server):
    """Debian's redis-server on 127.0.0.1:port, no persistence, in the foreground.

    It admits only clients that know ``password`` (random per server): another local user
    can neither publish events that would count nor run commands. The password is in the
    0600 configuration file (``config_file``, redis-server's only argument), never on a
    command line; clients get it from this object or their environment.
    """

    label = "redis-server"

    def __init__(self, workdir: Path, port: int = 0) -> None:
        super().__init__(workdir, port)
        self.password = secrets.token_hex(32)
        self.config_file = workdir / f"redis-{self.port}.conf"

    def argv(self) -> list[str]:
        self.config_file = self.workdir / self.config_file.name
        write_private(
            self.config_file,
            f"port {self.port}\n"
            "bind 127.0.0.1\n"
            "protected-mode yes\n"
            f"requirepass {self.password}\n"
            'save ""\n'
            "appendonly no\n"
            "daemonize no\n"
            f"dir {_quoted(self.workdir)}\n"
            "loglevel warning\n",
        )
        return [_binary("redis-server", "/usr/bin"), str(self.config_file)]


class Relay(Server):
    """perflab's delaying TCP relay (``perflab.net.relay``) on 127.0.0.1:port, forwarding to
    the run's own server on 127.0.0.1:``target`` and to nothing else; whatever that server
    asks of a client (keys, CurveZMQ certificates) it still asks through the relay."""

    label = "relay"

    def __init__(
        self, workdir: Path, target: int, rtt_ms: float, mbit: float | None = None
    ) -> None:
        super().__init__(workdir)
        while self.port == target:  # a port freed a moment ago can come back at once
            self.port = free_port()
        self.target, self.rtt_ms, self.mbit = target, rtt_ms, mbit
        self.log = workdir / f"relay-{self.port}.log"

    def argv(self) -> list[str]:
        shape = ["--rtt-ms", repr(float(self.rtt_ms))]
        shape += ["--mbit", repr(float(self.mbit))] if self.mbit else []
        return [sys.executable, "-m", "perflab.net.relay", "--listen", str(self.port),
                "--target", str(self.target), *shape]  # fmt: skip
