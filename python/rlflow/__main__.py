"""python3 -m rlflow IN.onnx OUT.onnx [options]: optimise a model and write it
(the package's optimize(), docs/python.md); prints what was done. Exit
status: 0 written, 1 the optimisation failed, 2 bad usage or an input that
cannot be used (the message names it)."""
import argparse
import sys

import rlflow


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python3 -m rlflow",
        description="Optimise an ONNX model with proved rewrite rules (rlflow).")
    p.add_argument("input", help="the model to optimise (.onnx)")
    p.add_argument("output", help="where to write the optimised model")
    p.add_argument("--rules", help="rules database (default: the default one)")
    p.add_argument("--target", choices=["ort"], help="ONNX Runtime decides what is written")
    p.add_argument("--search", default="taso", choices=["taso", "greedy", "random"],
                   help="the search (default taso)")
    p.add_argument("--threads", type=int, help="CPU threads")
    p.add_argument("--budget", type=int, help="graphs expanded")
    p.add_argument("--time-limit", type=float, help="seconds the search may take")
    p.add_argument("--passes", choices=["rules", "expert", "both"],
                   help="what rewrites the model (default both)")
    p.add_argument("-v", "--verbose", action="store_true", help="progress and notes")
    a = p.parse_args(argv)
    import onnx

    try:
        r = rlflow.optimize_with_report(a.input, rules=a.rules, target=a.target,
                                        search=a.search, threads=a.threads, budget=a.budget,
                                        time_limit=a.time_limit, passes=a.passes,
                                        verbose=a.verbose)
        onnx.save(r.model, a.output)
    except rlflow.InputError as e:
        print("rlflow: %s" % e, file=sys.stderr)
        return 2
    except (rlflow.Error, OSError, ValueError) as e:
        print("rlflow: %s" % e, file=sys.stderr)
        return 1
    print(r.report.summary())
    print("written:  %s" % a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
