"""python -m twinlearn.identity diff A B: the first stage where two traces part."""

import sys

from . import diff


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3 or argv[0] != "diff":
        print("usage: python -m twinlearn.identity diff TRACE_A TRACE_B", file=sys.stderr)
        return 2
    res = diff(argv[1], argv[2])
    if res is None:
        print("traces agree: every stage has the same bits")
        return 0
    print(f"first difference at stage {res['stage']} ({res['tag']}): {res['kind']}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
