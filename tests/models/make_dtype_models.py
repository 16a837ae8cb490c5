#!/usr/bin/python3
"""make_dtype_models.py — models of other dtypes for rlflow's tests and benches,
made from a float32 ONNX model with python3-onnx (Debian's /usr/bin/python3).

  fp16 IN OUT    every float tensor float16 (initializers, Constant, Cast
                 targets, ConstantOfShape); the graph's float inputs and
                 outputs stay float32 through Cast nodes at the edges, as
                 onnxconverter-common's keep_io_types does
  double IN OUT  the same with float64
                 (no value_info: rlflow keeps float16 and float64 arithmetic
                 as opaque nodes and finds their shapes by its rules)
  qdq IN OUT     ONNX Runtime's QDQ format: every MatMul, Gemm and Conv with
                 a float32 weight initializer reads it through
                 DequantizeLinear of an int8 copy (symmetric, per output
                 channel for Conv, per tensor otherwise: scale max|W|/127),
                 and its activation input through QuantizeLinear ->
                 DequantizeLinear (uint8, zero point 128, scale 8/127:
                 a fixed range of [-8.1, 8.1], not calibrated: no runtime is
                 at hand in Python here; both sides of a comparison run
                 the same quantised model, so the range decides accuracy
                 against float32, not the check)
  mlp OUT        a small float32 MLP (MatMul, Add, Relu, Softmax) to convert
  qlinear OUT    a small model of ONNX's integer operators: QuantizeLinear,
                 QLinearMatMul, MatMulInteger, QLinearConv, DequantizeLinear
  ms OUT         a small model with com.microsoft Gelu and FusedMatMul nodes
                 (as ONNX Runtime's optimiser writes them: no value_info)
  custom OUT     a node of a made-up domain with no value_info (rlflow must
                 refuse it by name: no shape for its output)

Exit status 0, or 2 with a message when the input cannot be read.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def rename(g, old, new):
    """Every node input and output named `old` is named `new`."""
    for n in g.node:
        for names in (n.input, n.output):
            for k, x in enumerate(names):
                if x == old:
                    names[k] = new


def convert(model, elem, np_type):
    g = model.graph
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np_type), t.name))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np_type),
                                                     a.t.name))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = elem
    del g.value_info[:]
    edge = []
    for i in g.input:
        if i.type.tensor_type.elem_type == TensorProto.FLOAT:
            inner = i.name + "_" + TensorProto.DataType.Name(elem).lower()
            rename(g, i.name, inner)
            edge.append(helper.make_node("Cast", [i.name], [inner], to=elem, name="cast_" + inner))
    for o in g.output:
        if o.type.tensor_type.elem_type == TensorProto.FLOAT:
            inner = o.name + "_" + TensorProto.DataType.Name(elem).lower()
            rename(g, o.name, inner)
            g.node.append(helper.make_node("Cast", [inner], [o.name], to=TensorProto.FLOAT,
                                           name="cast_" + o.name))
    nodes = edge + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model


def qdq(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    out = []
    act = {}  # activation name -> its QDQ'd name
    for n in g.node:
        w = n.input[1] if n.op_type in ("MatMul", "Gemm", "Conv") and len(n.input) > 1 else None
        if w is None or w not in inits or inits[w].data_type != TensorProto.FLOAT:
            out.append(n)
            continue
        W = numpy_helper.to_array(inits[w]).astype(np.float32)
        axis = 0 if n.op_type == "Conv" else None
        if axis is None:
            scale = np.array(max(float(np.abs(W).max()), 1e-8) / 127.0, dtype=np.float32)
            zp = np.array(0, dtype=np.int8)
            q = np.clip(np.rint(W / scale), -127, 127).astype(np.int8)
        else:
            m = np.abs(W.reshape(W.shape[0], -1)).max(axis=1)
            scale = (np.maximum(m, 1e-8) / 127.0).astype(np.float32)
            zp = np.zeros(W.shape[0], dtype=np.int8)
            q = np.clip(np.rint(W / scale.reshape(-1, *([1] * (W.ndim - 1)))), -127, 127)
            q = q.astype(np.int8)
        g.initializer.extend([numpy_helper.from_array(q, w + "_q"),
                              numpy_helper.from_array(scale, w + "_scale"),
                              numpy_helper.from_array(zp, w + "_zp")])
        dq_attrs = {"axis": 0} if axis is not None else {}
        out.append(helper.make_node("DequantizeLinear", [w + "_q", w + "_scale", w + "_zp"],
                                    [w + "_dq"], name=w + "_DequantizeLinear", **dq_attrs))
        x = n.input[0]
        if x not in inits:
            if x not in act:
                if x + "_act_scale" not in inits:
                    s = numpy_helper.from_array(np.array(8.0 / 127.0, dtype=np.float32),
                                                x + "_act_scale")
                    z = numpy_helper.from_array(np.array(128, dtype=np.uint8), x + "_act_zp")
                    g.initializer.extend([s, z])
                    inits[s.name] = s
                out.append(helper.make_node("QuantizeLinear", [x, x + "_act_scale", x + "_act_zp"],
                                            [x + "_q"], name=x + "_QuantizeLinear"))
                out.append(helper.make_node("DequantizeLinear",
                                            [x + "_q", x + "_act_scale", x + "_act_zp"],
                                            [x + "_dq"], name=x + "_act_DequantizeLinear"))
                act[x] = x + "_dq"
            n.input[0] = act[x]
        n.input[1] = w + "_dq"
        out.append(n)
    del g.node[:]
    g.node.extend(out)
    used = {x for n in g.node for x in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    del g.value_info[:]
    # QuantizeLinear with per-axis DequantizeLinear needs opset 13
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version < 13:
            o.version = 13
    return model


def mlp():
    rng = np.random.default_rng(1)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32) * 0.3, "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32) * 0.1, "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((32, 8)).astype(np.float32) * 0.3, "w2")
    b2 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32) * 0.1, "b2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="add1"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("Transpose", ["r"], ["rt"], perm=[1, 0], name="t1"),
             helper.make_node("Transpose", ["rt"], ["rtt"], perm=[1, 0], name="t2"),
             helper.make_node("MatMul", ["rtt", "w2"], ["o"], name="mm2"),
             helper.make_node("Add", ["o", "b2"], ["ob"], name="add2"),
             helper.make_node("Softmax", ["ob"], ["y"], axis=-1, name="softmax")]
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
                          [w1, b1, w2, b2])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def ms():
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32) * 0.3, "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Gelu", ["h"], ["g"], domain="com.microsoft", name="ms_gelu"),
             helper.make_node("Relu", ["g"], ["r"], name="relu"),
             helper.make_node("FusedMatMul", ["r", "x"], ["y"], domain="com.microsoft",
                              transB=1, alpha=0.5, name="ms_fused_matmul")]
    g = helper.make_graph(nodes, "ms",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


def qlinear():
    rng = np.random.default_rng(3)
    i8 = lambda shape: rng.integers(-127, 128, size=shape).astype(np.int8)  # noqa: E731
    t = numpy_helper.from_array
    inits = [t(np.array(0.05, np.float32), "xs"), t(np.array(128, np.uint8), "xz"),
             t(i8((16, 8)), "w1"), t(np.array(0.01, np.float32), "w1s"),
             t(np.array(0, np.int8), "w1z"), t(np.array(0.1, np.float32), "ys"),
             t(np.array(128, np.uint8), "yz"), t(i8((8, 4)), "w2"),
             t(np.array(0, np.int8), "w2z"), t(np.array(0.0005, np.float32), "s2"),
             t(i8((2, 1, 3, 3)), "wc"), t(np.array(0.02, np.float32), "wcs"),
             t(np.array(0, np.int8), "wcz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q"),
             helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "w1", "w1s", "w1z", "ys", "yz"],
                              ["hq"], name="qlinear_matmul"),
             helper.make_node("MatMulInteger", ["hq", "w2", "yz", "w2z"], ["h2"],
                              name="matmul_integer"),
             helper.make_node("Cast", ["h2"], ["h2f"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Mul", ["h2f", "s2"], ["y"], name="scale"),
             helper.make_node("Reshape", ["xq", "img_shape"], ["img"], name="to_image"),
             helper.make_node("QLinearConv", ["img", "xs", "xz", "wc", "wcs", "wcz", "ys", "yz"],
                              ["cq"], pads=[1, 1, 1, 1], name="qlinear_conv"),
             helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["c"], name="dq")]
    inits.append(t(np.array([4, 1, 4, 4], np.int64), "img_shape"))
    g = helper.make_graph(nodes, "qlinear",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4]),
                           helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 2, 4, 4])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def custom():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Mystery", ["r"], ["m"], domain="example.custom", name="mystery"),
             helper.make_node("Relu", ["m"], ["y"], name="relu2")]
    g = helper.make_graph(nodes, "custom",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("example.custom", 1)])


def main(argv):
    made = {"mlp": mlp, "ms": ms, "custom": custom, "qlinear": qlinear}
    if len(argv) == 3 and argv[1] in made:
        onnx.save(made[argv[1]](), argv[2])
        return 0
    if len(argv) != 4 or argv[1] not in ("fp16", "double", "qdq"):
        sys.stderr.write(__doc__)
        return 2
    try:
        model = onnx.load(argv[2])
    except Exception as e:  # noqa: BLE001 - any unreadable input
        sys.stderr.write("make_dtype_models.py: %s: %s\n" % (argv[2], e))
        return 2
    if argv[1] == "fp16":
        model = convert(model, TensorProto.FLOAT16, np.float16)
    elif argv[1] == "double":
        model = convert(model, TensorProto.DOUBLE, np.float64)
    else:
        model = qdq(model)
    onnx.checker.check_model(model)
    onnx.save(model, argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
