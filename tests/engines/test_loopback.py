"""The saga engine's sshd against another local user (uid ``nobody``): a run directory that
he planted or can write must not let him log in as the perflab user (issue 24)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attacker import NOBODY, as_nobody, listeners, needs_root, public
from perflab.engines import loopback
from perflab.engines.loopback import RedisServer, ServerError, Sshd

pytestmark = [pytest.mark.slow, needs_root]

#: As nobody: make a key of his own, put it where the run's sshd reads authorized keys
#: (replacing the file in a directory he owns, or the whole directory under a parent he
#: owns), then log in as the perflab user and run ``id``.
ATTACK = """
import shutil, subprocess, tempfile
from pathlib import Path
keys = Path(tempfile.mkdtemp())
subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / "k")],
               check=True, capture_output=True)
mine = (keys / "k.pub").read_bytes()
target = Path(TARGET)
try:
    if PLANTED == "parent":  # move the run's directory (in his) away, put his own there
        run = Path(SHARED) / "run"
        run.rename(run.with_name("moved"))
        Path(HOSTKEY).parent.mkdir(parents=True, exist_ok=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", HOSTKEY],
                       check=True, capture_output=True)
    tmp = target.with_name("planted")
    tmp.write_bytes(mine)
    tmp.replace(target)
    swapped = True
except OSError as exc:
    swapped = repr(exc)
proc = subprocess.run(
    ["ssh", "-F", "/dev/null", "-i", str(keys / "k"), "-p", str(PORT),
     "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
     "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", USER + "@127.0.0.1", "id"],
    capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
shutil.rmtree(keys, ignore_errors=True)
report(swapped=swapped, rc=proc.returncode, stdout=proc.stdout, stderr=proc.stderr[-500:])
"""
#: What the attack imports while still root (the interpreter's files are private here).
ATTACK_IMPORTS = ("pathlib", "shutil", "subprocess", "tempfile")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory in /tmp that uid nobody created (as he would pre-create a run root)."""
    path = Path("/tmp") / f"perflab-planted-{uuid.uuid4().hex[:8]}"
    as_nobody(f"import os\nos.mkdir({str(path)!r}, 0o777)\nos.chmod({str(path)!r}, 0o777)\n"
              "report(ok=True)")  # fmt: skip
    assert path.stat().st_uid == NOBODY
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _gone_pid() -> int:
    """The PID of a process that has ended."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _config(path: Path) -> dict[str, str]:
    """The running sshd's configuration (its ``-f`` file): keyword -> value."""
    pairs = [ln.split(None, 1) for ln in path.read_text().splitlines() if " " in ln]
    return {k: v.strip('"') for k, v in pairs}


@pytest.mark.parametrize("planted", ["workdir", "parent"])
def test_another_user_cannot_log_in_through_a_planted_directory(
    shared_dir: Path, planted: str
) -> None:
    """``workdir``: the sshd directory itself is his (0777); ``parent``: the run root above
    it is his, so he can move the run's directory away and put his own in its place."""
    workdir = shared_dir if planted == "workdir" else shared_dir / "run" / "sshd"
    sshd = Sshd(workdir)
    try:
        sshd.start()
    except ServerError as exc:  # perflab refuses the unsafe directory: nothing started
        assert str(shared_dir) in str(exc)
        assert sshd.proc is None
        return
    out = _attack(sshd, shared_dir, planted)
    assert "uid=" not in out["stdout"], f"uid nobody logged in as the perflab user: {out}"
    assert out["rc"] != 0, out


@pytest.mark.parametrize("planted", ["workdir", "parent"])
def test_sshd_itself_refuses_keys_another_user_can_replace(
    shared_dir: Path, planted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were perflab to use the planted directory, and keep authorized_keys in it, sshd's
    StrictModes would still refuse his key (a file or directory that is not the user's)."""
    monkeypatch.setattr(loopback, "private_dir", _unchecked_dir)
    monkeypatch.setattr(loopback, "sshd_accepts", lambda path, home: True)
    workdir = shared_dir if planted == "workdir" else shared_dir / "run" / "sshd"
    sshd = Sshd(workdir)
    sshd.start()
    assert str(shared_dir) in str(sshd.authorized_keys)
    out = _attack(sshd, shared_dir, planted)
    assert out["swapped"] is True and "uid=" not in out["stdout"], out
    assert "Permission denied (publickey)" in out["stderr"], out


def _unchecked_dir(path: Path) -> Path:
    """``private_dir`` without its checks: the directory made, whoever owns what."""
    path.mkdir(parents=True, exist_ok=True)
    return path


def _attack(sshd: Sshd, shared_dir: Path, planted: str) -> dict[str, Any]:
    """Run ATTACK as nobody against the started ``sshd``, then stop it; his outcome."""
    try:
        assert sshd.proc is not None
        config = _config(Path(sshd.proc.args[-1]))
        code = (
            f"PLANTED={planted!r}\nSHARED={str(shared_dir)!r}\n"
            f"TARGET={config['AuthorizedKeysFile']!r}\nHOSTKEY={config['HostKey']!r}\n"
            f"PORT={sshd.port}\nUSER={sshd.user!r}\n"
        )
        out = as_nobody(code + ATTACK, preimport=ATTACK_IMPORTS)
    finally:
        sshd.stop()
    print(f"attacker: {out}")
    return out


#: As nobody: listen where radical.saga tells ssh to put its connection-sharing socket
#: (``/tmp/saga_ssh_<user>_%h_%p.ctrl``, predictable) and report who connected, and what
#: they sent; a mux master of his would receive the session's stdin/stdout/stderr.
SQUAT = """
from pathlib import Path
path = Path(SOCKET)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(str(path))
path.chmod(0o777)
srv.listen(4)
srv.settimeout(20)
try:
    conn, _ = srv.accept()
    conn.settimeout(5)
    report(connected=True, sent=conn.recv(64).hex())
except OSError as exc:
    report(connected=False, error=repr(exc))
finally:
    path.unlink()
"""


def test_ssh_does_not_use_a_control_socket_another_user_planted(tmp_path: Path) -> None:
    """saga runs ``ssh -o ControlMaster=auto -o ControlPath=/tmp/saga_ssh_<user>_%h_%p.ctrl``:
    ssh first connects to whatever listens there. The run's ssh wrapper puts the socket in
    the run's private directory instead."""
    workdir = tmp_path / "run" / "sshd"
    workdir.parent.mkdir(mode=0o700)
    sshd = Sshd(workdir)
    sshd.start()
    planted = Path(f"/tmp/saga_ssh_{sshd.user}_127.0.0.1_{sshd.port}.ctrl")
    outcome: dict[str, Any] = {}
    squatter = threading.Thread(
        target=lambda: outcome.update(
            as_nobody(f"SOCKET={str(planted)!r}\n" + SQUAT, preimport=("socket", "pathlib"))
        )
    )
    squatter.start()
    try:
        deadline = time.monotonic() + 20
        while not planted.exists():
            assert time.monotonic() < deadline, "the squatter never listened"
            time.sleep(0.05)
        ssh = [str(sshd.client_bin / "ssh"), "-o", "ControlMaster=auto", "-o",
               f"ControlPath=/tmp/saga_ssh_{sshd.user}_%h_%p.ctrl", "-o", "ControlPersist=no",
               "-p", str(sshd.port), "127.0.0.1", "true"]  # fmt: skip
        proc = subprocess.run(ssh, capture_output=True, text=True, timeout=30)
    finally:
        if squatter.is_alive() and planted.exists():
            # nobody connected: wake the squatter so that it reports
            with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as s:
                s.connect(str(planted))
                s.sendall(b"test")
        squatter.join()
        sshd.stop()
    print(f"attacker: {outcome}; ssh: {proc.returncode} {proc.stderr.strip()!r}")
    assert outcome.get("sent") == b"test".hex(), f"ssh used his socket: {outcome}"
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("where", ["workdir", "parent"])
def test_redis_refuses_a_directory_another_user_can_change(shared_dir: Path, where: str) -> None:
    """He would swap the 0600 config (and its password) before redis-server reads it."""
    server = RedisServer(shared_dir if where == "workdir" else shared_dir / "run" / "redis")
    try:
        with pytest.raises(ServerError, match=str(shared_dir)):
            server.start()
    finally:
        server.stop()  # if it did start
    assert server.proc is None


def test_sshd_in_a_private_tmp_directory_admits_only_its_own_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest's tmp_path is under /tmp (1777), which sshd's StrictModes refuses as a place
    for authorized_keys: the run still works, and its files are private."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # the keys go to ~/.cache/perflab
    workdir = tmp_path / "run" / "sshd"
    workdir.parent.mkdir(mode=0o700)
    sshd = Sshd(workdir)
    # what a run killed outright (SIGKILL) left: the keys directory of a process now gone
    stale = Path(sshd.home, ".cache", "perflab", f"sshd-{_gone_pid()}-test")
    stale.mkdir(mode=0o700, parents=True)
    sshd.start()
    try:
        assert not stale.exists()
        socks = listeners(os.getpid())
        print(f"sshd listeners: {socks}")
        assert public(socks) == []
        assert any(port == sshd.port for _, port, _ in socks)
        proc = subprocess.run(
            [str(sshd.client_bin / "ssh"), "-p", str(sshd.port), "127.0.0.1", "id -un; echo $HOME"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, proc.stderr
        user, home = proc.stdout.split()
        assert user == sshd.user
        # the session's home is the run's own, empty: the user's start-up files are not
        # measured (and a stale pyenv lock in his ~/.bashrc hung every session a minute)
        assert Path(home) == sshd.workdir / "home" and not any(Path(home).iterdir())
        # the same key, from another loopback address or for another user: refused
        # (``from="127.0.0.1"``; AllowUsers, and sshd reads the file as that user, who
        # cannot enter the 0700 directory)
        for extra in (["-b", "127.0.0.2"], ["-l", "nobody"]):
            ssh = [str(sshd.client_bin / "ssh"), *extra, "-p", str(sshd.port), "127.0.0.1", "id"]
            proc = subprocess.run(ssh, capture_output=True, text=True, timeout=30)
            assert proc.returncode == 255 and "Permission denied" in proc.stderr, (extra, proc)
        config = sshd.config_file.read_text()
        assert "StrictModes yes" in config and f"AllowUsers {sshd.user}" in config
        # StrictModes refuses /tmp (1777) above the run: the keys are in a private directory
        assert workdir not in sshd.authorized_keys.parents
        keys = sshd.authorized_keys.read_text()
        control = Path(
            re.findall(r"ControlPath=(\S+)/%C", (sshd.client_bin / "ssh").read_text())[0]
        )
        assert keys.startswith('from="127.0.0.1",no-agent-forwarding,no-X11-forwarding,')
        for path in (workdir, sshd.authorized_keys.parent, control):
            assert path.stat().st_mode & 0o777 == 0o700, path
        for path in [p for p in workdir.iterdir() if p.is_file()] + [sshd.authorized_keys]:
            mode = path.stat().st_mode & 0o777
            assert mode & 0o077 == 0 or path.suffix == ".pub", (path, oct(mode))
        # another user cannot read the run's key or logs, or traverse its directory
        out = as_nobody(f"import os\nreport(listed=os.access({str(workdir)!r}, os.R_OK | os.X_OK))")
        assert out == {"listed": False}
    finally:
        sshd.stop()
    # authorized_keys and the sockets, outside the run directory (see Sshd), go with it
    assert not sshd.authorized_keys.exists() and not control.exists()
