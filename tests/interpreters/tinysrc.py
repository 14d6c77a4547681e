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


#: A Makefile like CPython's for PGO: ``all`` makes the training run's stamp in a sub-make,
#: whose recipe runs ``./python3.99 $(PROFILE_TASK)`` with no ``|| true`` (as 3.13's).
PGO_MAKEFILE = """\
TESTTIMEOUT=
PROFILE_TASK=\t-m test --pgo --timeout=$(TESTTIMEOUT)
all: python3.99
\t$(MAKE) profile-run-stamp
python3.99: @SRC@/hello.c
\tcc -o python3.99 @SRC@/hello.c
profile-run-stamp: python3.99
\t./python3.99 $(PROFILE_TASK)
\ttouch $@
install: python3.99
\tmkdir -p @PREFIX@/bin
\tcp python3.99 @PREFIX@/bin/python3.99
"""
#: A training run as regrtest prints it under ``--pgo`` (no summary of names), one test
#: failing: its arguments echoed, the exit status 2.
TRAINER_ONE_FAILS = r"""#include <stdio.h>
int main(int argc, char **argv) {
  if (argc < 2) { puts("hello"); return 0; }
  for (int i = 1; i < argc; i++) printf("arg %s\n", argv[i]);
  puts("0:00:00 load avg: 6.37 [ 1/2] test_array");
  puts("0:00:01 load avg: 6.37 [ 1/2] test_array passed");
  puts("0:00:33 load avg: 5.28 [2/2] test_generators");
  puts("test test_generators failed");
  puts("0:00:34 load avg: 5.28 [2/2] test_generators failed (1 failure)");
  puts("");
  puts("Total tests: run=9,367 failures=1 skipped=210");
  puts("Total test files: run=2/2 failed=1");
  puts("Result: FAILURE");
  return 2;
}
"""
#: A training run that dies before regrtest's result (no profile would be written).
TRAINER_CRASHES = (
    "#include <stdio.h>\nint main(int argc, char **argv) {\n"
    '  if (argc < 2) { puts("hello"); return 0; }\n'
    '  puts("0:00:00 load avg: 6.37 [ 1/2] test_array"); return 139;\n}\n'
)
