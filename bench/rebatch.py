#!/usr/bin/python3
# rebatch.py — an exported model at another batch, or with its batch symbolic,
# for bench_passes (issue 28: batch 4 and a symbolic batch of models exported at
# one batch). Run by /usr/bin/python3 with python3-onnx:
#
#   rebatch.py IN OUT BATCH      BATCH: a positive integer, or "sym"
#
# The batch of IN is the leading dim of its first graph input. Changed:
#   - graph inputs' and outputs' leading dim of that size: BATCH, or the
#     dim_param "batch";
#   - integer shape vectors (initializers or Constant nodes) whose first entry
#     is that batch and that are read only as a Reshape's shape: BATCH, or -1;
#   - the same read only as an Expand's shape (a class token broadcast over the
#     batch), when IN's batch is above 1 (a leading 1 there broadcasts and is
#     left): BATCH, or the first input's batch read by Shape and Slice at run
#     time, concatenated with the rest.
# value_info is dropped (its shapes are IN's). A model with the batch folded
# into other shapes (PyTorch's batch-1 nn.MultiheadAttention export reshapes
# [S, B*h, d]) cannot be rebatched this way: exit 1 when nothing was found to
# change, and no check can see the folded case, so callers choose the models.
import sys

import onnx
from onnx import helper, numpy_helper


def main(argv):
    if len(argv) != 4 or (argv[3] != "sym" and not argv[3].isdigit()):
        sys.stderr.write("usage: rebatch.py IN OUT BATCH (a positive integer or sym)\n")
        return 2
    src, dst, to = argv[1], argv[2], argv[3]
    sym = to == "sym"
    new = 0 if sym else int(to)
    if not sym and new < 1:
        sys.stderr.write("rebatch.py: BATCH must be positive\n")
        return 2
    m = onnx.load(src)
    g = m.graph
    inits = {t.name for t in g.initializer}
    inputs = [vi for vi in g.input if vi.name not in inits]
    if not inputs or not inputs[0].type.tensor_type.shape.dim:
        sys.stderr.write("rebatch.py: %s: the first input has no shape\n" % src)
        return 1
    old = inputs[0].type.tensor_type.shape.dim[0].dim_value
    if old < 1:
        sys.stderr.write("rebatch.py: %s: the first input's batch is not a number\n" % src)
        return 1
    changed = 0
    for vi in inputs + list(g.output):
        d = vi.type.tensor_type.shape.dim
        if len(d) and d[0].dim_value == old:
            if sym:
                d[0].dim_param = "batch"
            else:
                d[0].dim_value = new
            changed += 1

    users = {}
    for n in g.node:
        for k, x in enumerate(n.input):
            users.setdefault(x, []).append((n, k))

    def read_only_as(name, op):
        u = users.get(name, [])
        return u and all(n.op_type == op and k == 1 for n, k in u)

    def shape_vector(t):
        a = numpy_helper.to_array(t)
        return a if a.dtype.kind == "i" and a.ndim == 1 and len(a) >= 2 and a[0] == old else None

    batch_of_input = None
    extra = []

    def run_time_batch():
        nonlocal batch_of_input
        if batch_of_input is None:
            base = "rebatch/" + inputs[0].name
            extra.append(helper.make_node("Shape", [inputs[0].name], [base + "/shape"]))
            for name, v in (("start", 0), ("end", 1)):
                g.initializer.append(
                    helper.make_tensor(base + "/" + name, onnx.TensorProto.INT64, [1], [v]))
            extra.append(helper.make_node("Slice", [base + "/shape", base + "/start",
                                                    base + "/end"], [base + "/batch"]))
            batch_of_input = base + "/batch"
        return batch_of_input

    def rewrite(t, name, replace):
        nonlocal changed
        a = shape_vector(t)
        if a is None:
            return
        if read_only_as(name, "Reshape"):
            a = a.copy()
            a[0] = -1 if sym else new
            replace(numpy_helper.from_array(a, t.name))
            changed += 1
        elif read_only_as(name, "Expand") and old > 1:
            if not sym:
                a = a.copy()
                a[0] = new
                replace(numpy_helper.from_array(a, t.name))
            else:
                rest = name + "/rest"
                g.initializer.append(numpy_helper.from_array(a[1:].astype(a.dtype), rest))
                for n, _ in users[name]:
                    n.input[1] = name + "/batch"
                extra.append(helper.make_node("Concat", [run_time_batch(), rest],
                                              [name + "/batch"], axis=0))
            changed += 1

    for i, t in enumerate(list(g.initializer)):
        rewrite(t, t.name, lambda nt, i=i: g.initializer[i].CopyFrom(nt))
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            rewrite(n.attribute[0].t, n.output[0], lambda nt, n=n: n.attribute[0].t.CopyFrom(nt))
    if changed == 0:
        sys.stderr.write("rebatch.py: %s: nothing of batch %d found\n" % (src, old))
        return 1
    if extra:
        nodes = extra + list(g.node)
        del g.node[:]
        g.node.extend(nodes)
    del g.value_info[:]
    onnx.save(m, dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
