# tests/h5py_python.sh - sourced by the tests that write or read HDF5 with
# h5py: sets $py to the python3 with h5py and numpy that CMake found
# (KS_PYTHON, tests/CMakeLists.txt); run by hand, without it, to the first of
# python3 on PATH and /usr/bin/python3 that has both (the first on PATH may
# be a pyenv's without them, where Debian's has them). Where there is none,
# says why and exits 77 (CTest: skipped; a failure with KS_TESTS_STRICT).
# $1: the test's name, for the message.
py=
for p in ${KS_PYTHON:-} python3 /usr/bin/python3; do
    if "$p" -c 'import h5py, numpy' 2> /dev/null; then
        py=$p
        break
    fi
done
if [ -z "$py" ]; then
    echo "$1: no python3 with h5py and numpy (python3-h5py python3-numpy); skipped" >&2
    exit 77
fi
