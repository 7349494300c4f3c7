#!/bin/sh
# Note [No static initialisers in per-ISA files]: fails if an object compiled for a
# capability above DEFAULT (*.AVX2.cpp.o) has a dynamic initialiser, which would run
# that ISA's code at load time on any CPU. Arguments: object files (others are ignored).
status=0
for o in "$@"; do
  case "$o" in
    *.AVX2.cpp.o)
      if nm "$o" | grep -q _GLOBAL__sub_I; then
        echo "$o has a dynamic initialiser"
        status=1
      fi
      ;;
  esac
done
exit $status
