"""A small autoconf-like source tree: a ``configure`` shell script that records its
arguments and writes a Makefile, and a C program that installs itself as ``python3.99``."""

from __future__ import annotations

from pathlib import Path

CONFIGURE = r"""#!/bin/sh
# records its arguments and writes the Makefile, as an autoconf script would
prefix=/usr/local
for a in "$@"; do
  case "$a" in --prefix=*) prefix="${a#--prefix=}";; esac
done
echo "$@" > configured.txt
sed "s|@PREFIX@|$prefix|; s|@SRC@|$(dirname "$0")|" "$(dirname "$0")/Makefile.in" > Makefile
echo "configured for $prefix"
"""
MAKEFILE = """\
all: python3.99
python3.99: @SRC@/hello.c
\tcc -o python3.99 @SRC@/hello.c
install: python3.99
\tmkdir -p @PREFIX@/bin
\tcp python3.99 @PREFIX@/bin/python3.99
"""
HELLO = '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n'
PATCHLEVEL = '#define PY_VERSION "3.99.1"\n'


def tree(tmp_path: Path, hello: str = HELLO) -> Path:
    src = tmp_path / "src-3.99"
    (src / "Include").mkdir(parents=True)
    (src / "configure").write_text(CONFIGURE)
    (src / "configure").chmod(0o755)
    (src / "Makefile.in").write_text(MAKEFILE)
    (src / "hello.c").write_text(hello)
    (src / "Include" / "patchlevel.h").write_text(PATCHLEVEL)
    return src
