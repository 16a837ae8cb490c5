#!/usr/bin/python3
# attention_form.py — a transformer file with a symbolic batch rewritten so that
# ONNX Runtime 1.30 on CPU runs each self-attention as one com.microsoft
# Attention kernel, to measure what that kernel is worth against the file
# (issue 28, docs/log/target.md 2026-11-30 "what ONNX Runtime's CPU attention
# would give"). Run by /usr/bin/python3 with python3-onnx:
#
#   attention_form.py IN OUT FORM
#
# FORM:
#   fused    standard ONNX that ONNX Runtime's AttentionFusion rewrites into
#            Attention: opset 12 (its BERT pattern matches MatMul-1/9,
#            Unsqueeze-1/11 and Cast-9 on the mask, ONNX Runtime's own
#            LayerNormalization-1, so the layer norms stay decomposed), Unsqueeze
#            axes as attributes, Softmax axis 3, head reshape targets
#            [0, 0, N, H] and [0, 0, W], bias adds (MatMul, bias), residual adds
#            (projection, skip), and one Reshape [-1, S, W] before the first layer
#            norm so that no later batch dim is named (with named dims the
#            residual adds become SkipLayerNormalization, slower on this provider).
#            BERT layout only: separate Q, K, V MatMul + bias Add, the mask
#            Unsqueeze(1), Unsqueeze(2), Cast, Sub(1, m), Mul(m, -10000).
#   control  fused's file with Softmax axis -1, which the fusion does not take:
#            the same operators, nothing fused (what the form alone costs).
#   contrib  the file at its opset with each attention replaced by one
#            com.microsoft Attention (Q, K, V weights packed [W, 3W]; causal
#            when the scores pass through a Where, as GPT's), with fused's
#            Reshape before the first layer norm. ONNX Runtime only: the ceiling.
#
# Exit 0 written, 1 no attention of the expected layout found (nothing written),
# 2 usage. Checks OUT with onnx.checker (schemas at OUT's opset).
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


class Graph:
    def __init__(self, model):
        self.m = model
        self.g = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        for n in self.g.node:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                self.consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.prod = {o: n for n in self.g.node for o in n.output}
        self.users = {}
        for n in self.g.node:
            for i in n.input:
                self.users.setdefault(i, []).append(n)
        self.count = 0

    def const(self, arr, base):
        self.count += 1
        name = "%s_af%d" % (base, self.count)
        self.g.initializer.append(numpy_helper.from_array(np.asarray(arr), name))
        self.consts[name] = np.asarray(arr)
        return name

    def producer(self, name, op):
        n = self.prod.get(name)
        if n is None or n.op_type != op:
            raise LookupError("%s is not made by %s" % (name, op))
        return n

    def only_user(self, name, op):
        us = self.users.get(name, [])
        if len(us) != 1 or us[0].op_type != op:
            raise LookupError("%s is not read by one %s" % (name, op))
        return us[0]

    def variable_input(self, n):
        return [i for i in n.input if i not in self.consts][0]

    def constant_input(self, n):
        c = [i for i in n.input if i in self.consts]
        if len(c) != 1:
            raise LookupError("%s has no constant operand" % n.name)
        return c[0]

    def projection(self, head_reshape):
        """Reshape <- [Split <-] Add(bias) <- MatMul(x, W): (add, matmul, split or None)"""
        src = self.prod.get(head_reshape.input[0])
        split = None
        if src is not None and src.op_type == "Split":
            split, src = src, self.prod.get(src.input[0])
        if src is None or src.op_type != "Add":
            raise LookupError("no bias add before %s" % head_reshape.name)
        mm = self.producer(self.variable_input(src), "MatMul")
        return src, mm, split

    def attentions(self):
        """Per Softmax: the nodes of one scaled dot-product attention."""
        out = []
        for s in [n for n in self.g.node if n.op_type == "Softmax"]:
            a = {"softmax": s}
            x = self.prod[s.input[0]]
            if x.op_type == "Where":
                a["where"], x = x, self.prod[x.input[1]]
            if x.op_type == "Add":
                a["mask_add"], x = x, self.prod[x.input[0]]
            if x.op_type != "Div":
                raise LookupError("no Div of the scores before %s" % s.name)
            a["div"] = x
            a["qk"] = self.producer(x.input[0], "MatMul")
            a["ctx"] = self.only_user(s.output[0], "MatMul")
            a["ctx_t"] = self.only_user(a["ctx"].output[0], "Transpose")
            a["ctx_r"] = self.only_user(a["ctx_t"].output[0], "Reshape")
            for k, v in (("q", a["qk"].input[0]), ("k", a["qk"].input[1]), ("v", a["ctx"].input[1])):
                t = self.producer(v, "Transpose")
                r = self.producer(t.input[0], "Reshape")
                a[k] = (t, r) + self.projection(r)
            out.append(a)
        if not out:
            raise LookupError("no Softmax: no attention")
        return out

    def drop_dead(self):
        outs = {o.name for o in self.g.output}
        while True:
            used = set(outs)
            for n in self.g.node:
                used.update(n.input)
            dead = [n for n in self.g.node if not any(o in used for o in n.output)]
            if not dead:
                break
            for n in dead:
                self.g.node.remove(n)
        used = {i for n in self.g.node for i in n.input}
        for t in list(self.g.initializer):
            if t.name not in used:
                self.g.initializer.remove(t)

    def unname_batch(self, seq_width):
        """A Reshape [-1, S, W] before the first layer norm (its ReduceMean)."""
        rm = [n for n in self.g.node if n.op_type in ("ReduceMean", "LayerNormalization")][0]
        x = rm.input[0]
        r = helper.make_node("Reshape", [x, self.const(np.array([-1] + seq_width, np.int64), "unnamed")],
                             [x + "_unnamed"])
        for n in self.users[x]:
            for k, i in enumerate(n.input):
                if i == x:
                    n.input[k] = x + "_unnamed"
        self.g.node.insert(list(self.g.node).index(self.users[x][0]), r)


def set_attribute(n, name, value):
    for a in n.attribute:
        if a.name == name:
            n.attribute.remove(a)
            break
    n.attribute.append(helper.make_attribute(name, value))


def seq_width(attentions, G):
    """[S, W] of the attention's output reshape [-1, S, W]."""
    target = G.consts.get(attentions[0]["ctx_r"].input[1])
    if target is None or len(target) != 3 or target[1] <= 0:
        raise LookupError("the attention's output reshape has no constant [-1, S, W] target")
    return target.tolist()[1:]


def bert_form(G, fuse):
    attentions = G.attentions()
    sw = seq_width(attentions, G)
    for a in attentions:
        if "mask_add" not in a or "where" in a or any(a[k][4] is not None for k in "qkv"):
            raise LookupError("not the BERT layout (separate Q, K, V and an additive mask)")
        heads = G.consts[a["q"][1].input[1]].tolist()
        for k in "qkv":
            t, r, add, mm, _ = a[k]
            r.input[1] = G.const(np.array([0, 0] + heads[2:], np.int64), "heads")
            add.input[0], add.input[1] = mm.output[0], G.constant_input(add)
        width = G.consts[a["ctx_r"].input[1]].tolist()[2]
        a["ctx_r"].input[1] = G.const(np.array([0, 0, width], np.int64), "merge")
        set_attribute(a["softmax"], "axis", 3 if fuse else -1)
        out_add = G.only_user(a["ctx_r"].output[0], "MatMul")
        out_add = G.only_user(out_add.output[0], "Add")
        out_add.input[0], out_add.input[1] = G.variable_input(out_add), G.constant_input(out_add)
        residual = G.only_user(out_add.output[0], "Add")
        skip = [i for i in residual.input if i != out_add.output[0]][0]
        residual.input[0], residual.input[1] = out_add.output[0], skip
    for n in G.g.node:  # the feed-forward's bias adds too, and every residual add
        if n.op_type == "Add" and len(n.input) == 2 and n.input[0] in G.consts \
                and n.input[1] in G.prod and G.prod[n.input[1]].op_type == "MatMul":
            n.input[0], n.input[1] = n.input[1], n.input[0]
    for n in G.g.node:
        if n.op_type in ("Unsqueeze", "Squeeze", "Split") and len(n.input) == 2:
            set_attribute(n, "split" if n.op_type == "Split" else "axes", G.consts[n.input[1]].tolist())
            del n.input[1]
        elif n.op_type == "ReduceSum" and len(n.input) == 2:
            raise LookupError("ReduceSum with axes as an input has no opset-12 form here")
    for o in G.m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 12
    G.unname_batch(sw)


def contrib_form(G):
    G.m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    mask = None
    attentions = G.attentions()
    sw = seq_width(attentions, G)
    for a in attentions:
        projections = [a[k][2:] for k in "qkv"]
        if all(p[2] is not None for p in projections):  # one MatMul + Add + Split (GPT)
            add, mm, _ = projections[0]
            w, b = G.consts[mm.input[1]], G.consts[G.constant_input(add)]
        elif all(p[2] is None for p in projections):
            w = np.concatenate([G.consts[p[1].input[1]] for p in projections], axis=1)
            b = np.concatenate([G.consts[G.constant_input(p[0])] for p in projections])
        else:
            raise LookupError("Q, K and V projected neither apart nor together")
        x = projections[0][1].input[0]
        heads = int(G.consts[a["v"][1].input[1]].tolist()[2])
        inputs = [x, G.const(w, "qkv_weight"), G.const(b, "qkv_bias")]
        attrs = {"num_heads": heads}
        if "where" in a:
            attrs["unidirectional"] = 1
        if "mask_add" in a:
            if mask is None:
                src = a["mask_add"].input[1]
                while src in G.prod and G.prod[src].input:
                    src = G.prod[src].input[0] if G.prod[src].op_type != "Sub" else G.prod[src].input[1]
                mask = "mask_int32_af"
                G.g.node.insert(0, helper.make_node("Cast", [src], [mask], to=TensorProto.INT32))
            inputs.append(mask)
        att = helper.make_node("Attention", inputs, [a["ctx_r"].output[0]], domain="com.microsoft",
                               name=a["ctx_r"].name + "_attention", **attrs)
        i = list(G.g.node).index(a["ctx_r"])
        G.g.node.remove(a["ctx_r"])
        G.g.node.insert(i, att)
    G.unname_batch(sw)


def main(argv):
    if len(argv) != 4 or argv[3] not in ("fused", "control", "contrib"):
        sys.stderr.write("usage: attention_form.py IN OUT fused|control|contrib\n")
        return 2
    m = onnx.load(argv[1])
    G = Graph(m)
    try:
        if argv[3] == "contrib":
            contrib_form(G)
        else:
            bert_form(G, argv[3] == "fused")
    except LookupError as e:
        sys.stderr.write("attention_form.py: %s: %s\n" % (argv[1], e))
        return 1
    G.drop_dead()
    del G.g.value_info[:]
    onnx.checker.check_model(m)
    onnx.save(m, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
