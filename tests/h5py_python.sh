# tests/h5py_python.sh - sourced by the tests that write or read HDF5 with
# h5py: sets $py to a python3 with h5py and numpy (the first on PATH may be
# one without them, a pyenv's, where Debian's has them), or says why and exits
# 77 (CTest: skipped) when there is none. $1: the test's name, for the message.
py=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import h5py, numpy' 2> /dev/null; then
        py=$p
        break
    fi
done
if [ -z "$py" ]; then
    echo "$1: no python3 with h5py and numpy (python3-h5py python3-numpy); skipped" >&2
    exit 77
fi
