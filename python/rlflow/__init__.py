"""rlflow: optimise ONNX models with proved graph substitutions.

    import rlflow
    model = rlflow.optimize("model.onnx")            # -> onnx.ModelProto
    result = rlflow.optimize_with_report(model)      # .model, .report
    print(rlflow.Rules().list(ops="matmul", limit=5))

The optimisation is the library's one call (optimize/optimize.h), the one
`rlflow-agent` runs, in the C extension rlflow._rlflow; this file turns
models (a ModelProto, bytes or a path) into files and back and wraps the
report. Without `rules`, the default rules database is used: the one the
package was installed with, else the user cache's, made there on first use
(about 2 minutes on 2 cores, progress on stderr). docs/python.md.
"""
import os
import tempfile

from . import _rlflow
from ._rlflow import Error, InputError

__all__ = ["optimize", "optimize_with_report", "Result", "Report", "Rules", "default_rules",
           "compare_in_ort", "Error", "InputError"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def default_rules(make=True):
    """The default rules database: (path, origin), origin one of "package"
    (installed with the package), "cache" (the user cache's) or "made" (made
    now in the user cache). With make=False, rlflow.Error when there is none
    yet instead of making it."""
    return _rlflow.default_rules([_PACKAGE_DIR], bool(make))


class Report:
    """What an optimisation did (the fields of optimize.h's report).

    rules: the database used (rules_origin: "given", "package", "cache",
    "made"); nodes_before/after; cost_before_ms/cost_after_ms (the cost
    model); latency_before_ms/latency_after_ms (measured end to end, None
    when not measured; latency_noise the medians' spread, latency_on where);
    kept_original (True: nothing faster passed the checks, the input is
    returned); max_abs_error (the numerical check, None when not checked);
    applied (the rules applied: dicts with count, rule_id (the database's,
    Rules().show(rule_id) shows it), reversed (applied right to left),
    backward (at a value), text);
    target and verdict (with target="ort": ONNX Runtime's version and the
    arbiter's verdict); seconds.
    """

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        lat = ""
        if self.latency_before_ms is not None:
            lat = ", latency %.4f -> %.4f ms" % (self.latency_before_ms, self.latency_after_ms)
        return ("<rlflow.Report %d -> %d nodes, cost %.4f -> %.4f ms%s, %d rule(s) applied%s>"
                % (self.nodes_before, self.nodes_after, self.cost_before_ms,
                   self.cost_after_ms, lat, self.n_applied,
                   ", input kept" if self.kept_original else ""))

    def summary(self):
        """A few lines saying what was done, as rlflow-agent prints them."""
        lines = ["rules:    %s (%s)" % (self.rules, self.rules_origin),
                 "nodes:    %d -> %d" % (self.nodes_before, self.nodes_after),
                 "cost:     %.4f ms -> %.4f ms (%s)" % (self.cost_before_ms,
                                                        self.cost_after_ms, self.cost_model)]
        if self.latency_before_ms is not None:
            lines.append("latency:  %.4f ms -> %.4f ms (%s)" % (
                self.latency_before_ms, self.latency_after_ms, self.latency_on))
        if self.target:
            lines.append("target:   %s: %s" % (self.target, self.verdict))
        if self.max_abs_error is not None:
            lines.append("max |d|:  %.3g" % self.max_abs_error)
        lines.append("result:   %s" % ("the input, unchanged" if self.kept_original
                                       else "optimised"))
        for a in self.applied:
            lines.append("applied:  %dx rule %d%s%s: %s" % (
                a["count"], a["rule_id"], " reversed" if a["reversed"] else "",
                " (backward)" if a["backward"] else "", a["text"]))
        return "\n".join(lines)


class Result:
    """optimize_with_report's answer: the model and its report."""

    def __init__(self, model, report):
        self.model = model
        self.report = report

    def __repr__(self):
        return "<rlflow.Result %r>" % (self.report,)


def _write_input(model, tmp):
    """A path to the model: the path given, or the model written in tmp."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    os.makedirs(tmp, exist_ok=True)
    path = os.path.join(tmp, "input.onnx")
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif hasattr(model, "SerializeToString"):
        data = model.SerializeToString()
    else:
        raise TypeError("rlflow: model must be an onnx.ModelProto, bytes or a path, not %s"
                        % type(model).__name__)
    with open(path, "wb") as f:
        f.write(data)
    return path


def optimize_with_report(model, rules=None, target=None, search="taso", threads=None,
                         budget=None, **options):
    """Like optimize(), returning a Result with .model and .report."""
    import onnx

    origin = "given"
    if rules is None:
        rules, origin = default_rules()
    opts = dict(options)
    opts.update(rules=os.fspath(rules), search=search, threads=threads, budget=budget)
    if target is not None:
        if target not in ("ort", True, False, "none"):
            raise ValueError("rlflow: target must be 'ort' (ONNX Runtime decides) or None")
        opts["target"] = target in ("ort", True)
    with tempfile.TemporaryDirectory(prefix="rlflow-") as tmp:
        src = _write_input(model, tmp)
        out = os.path.join(tmp, "output.onnx")
        fields = _rlflow.optimize_file(src, out, opts)
        fields["rules_origin"] = origin
        written = onnx.load(out)  # with its external data, if any, loaded here
    return Result(written, Report(fields))


def optimize(model, rules=None, target=None, search="taso", threads=None, budget=None,
             **options):
    """Optimises an ONNX model; returns the optimised onnx.ModelProto.

    model: an onnx.ModelProto, bytes or a path. rules: a rules database
    (default: the default one, see default_rules()). target: "ort" to let
    ONNX Runtime decide what is returned (its latency, alternating runs).
    search: "taso" (default), "greedy" or "random". threads, budget: CPU
    threads and graphs expanded (None: the library's defaults). Further
    options (docs/python.md): time_limit, seed, passes ("rules", "expert",
    "both"), agent ("search", "ppo", "wm"), alpha, locations, max_rule_size,
    derived_rules, check, rtol, atol, latency (0, 1, 2), backend
    ("onednn", "analytic"), cache, candidates, target_budget,
    target_budget_max, dims ({name: size}), data, external_data, verbose.

    The returned model computes the same outputs as the input (checked on
    random inputs); when nothing faster passes the checks it is the input.
    Raises rlflow.InputError when an input cannot be used and rlflow.Error
    when the optimisation failed, with the library's message.
    """
    return optimize_with_report(model, rules, target, search, threads, budget,
                                **options).model


def compare_in_ort(a, b, seed=1, threads=1):
    """Runs models a and b (ModelProtos, bytes or paths) in ONNX Runtime on
    the same random inputs (drawn with seed for a's inputs) and returns
    {"max_abs", "max_rel", "runtime"}: the largest |a - b| and relative
    difference over every output, and the runtime's identity. rlflow.Error
    when ONNX Runtime is not installed (tools/setup.sh) or a model fails."""
    with tempfile.TemporaryDirectory(prefix="rlflow-") as tmp:
        pa = _write_input(a, os.path.join(tmp, "a"))
        pb = _write_input(b, os.path.join(tmp, "b"))
        return _rlflow.ort_diff(pa, pb, int(seed), int(threads))


class Rules:
    """A rules database's views (the xferdb tool's, audit/): stats(), list(),
    families(), show(id), explain(id), each returning the text xferdb
    prints. Rules() is the default database."""

    def __init__(self, path=None):
        self.path = os.fspath(path) if path is not None else default_rules()[0]
        if not os.path.exists(self.path):
            raise InputError("%s: no such rules database" % self.path)

    def __repr__(self):
        return "rlflow.Rules(%r)" % self.path

    def _view(self, view, rule_id=None, ops=None, status=None, max_size=0, limit=0):
        if isinstance(ops, (list, tuple)):
            ops = ",".join(ops)
        return _rlflow.rules_view(self.path, view, None if rule_id is None else str(rule_id),
                                  ops, status, int(max_size), int(limit))

    def stats(self):
        """Counts by status, size and operator."""
        return self._view("stats")

    def list(self, ops=None, status=None, max_size=0, limit=0):
        """The rules using every operator of `ops` (a list or "a,b"), of one
        status ("proved", "derived", "refuted", "unknown", "candidate"), at
        most max_size operators per side, at most `limit` of them."""
        return self._view("list", ops=ops, status=status, max_size=max_size, limit=limit)

    def families(self, ops=None, status=None, max_size=0, limit=0):
        """The rules grouped by their layout-operator family."""
        return self._view("families", ops=ops, status=status, max_size=max_size, limit=limit)

    def show(self, rule_id):
        """One rule in full, with its verdict."""
        return self._view("show", rule_id=rule_id)

    def explain(self, rule_id):
        """A derived rule's chain of proved rules, replayed."""
        return self._view("explain", rule_id=rule_id)
