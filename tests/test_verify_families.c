/*
 * test_verify_families.c — the rule families that were stored `unknown`
 * ("axioms incomplete, bounded valid") in the 4-operator samples and the
 * axioms and shape facts that now prove them (docs/verify.md, "Rule
 * families"): layer-norm linear in its scale and of a tensor concatenated
 * with itself, layer-norm over one element (also inside a sum the axioms
 * take apart)
 * and the mean of a centred layer-norm (zero tensors), 1x1 convolutions
 * commuting with average pooling, means and enlarging, strides over a size-1
 * axis, means and enlarging of slices, slices across and within concats,
 * batch/channel slices of transposes; and from the 4-operator run: split
 * parts rejoined right-nested, slices straddling a concat boundary,
 * kernels that are channel concats of splits, convolutions of transposes,
 * layer-norm scales as factors (products of scales, a scalar scale
 * squared), average pooling of a 1x1 image, strided convolutions with the
 * identity kernel and with the average pooling of an enlarged one; a
 * softmax over one element (the ones constant), also concatenated with
 * itself; batched products of a tensor's split parts (the split's input is
 * the concat of its parts); attention's 4-D layout: a position slice
 * through a 1x1 convolution and a batched matmul, the head transpose
 * through a sum, a product and a layer-norm, slices along two axes swapped;
 * GPT's merged Q/K/V: the heads of a half or a third of the last axis as a
 * slice of the heads of the whole (hsplit-slice-last); the last-axis
 * softmax and layer-norms through any reshape that keeps the last axis,
 * layer-norms of a tensor plus a scalar, and a reshape of a sum or scalar
 * product taken apart under a matmul (the reverse triggers of ewadd-view
 * and smul-view). Each
 * true rule is proved, is not refuted by the bounded check, and (when
 * axioms prove it) is no longer proved once they are switched off; each
 * near miss (the bias added twice, a layer-norm over two different parts, a stride-2 or 3x3 convolution in place of the 1x1 one, sigmoid
 * that does not keep 0, the mean of a layer-norm whose scale is a vector, a
 * slice at the wrong offset or part, splits rejoined in the wrong order, a
 * kernel permuted alone, a transpose of one operand only, a scale
 * squared on one side only, a pooling or relu dropped, a softmax over two
 * elements taken for ones, split parts rejoined swapped, ones concatenated
 * with a tensor, a 3x3 convolution's position slice, a batch slice of one
 * matmul operand at another part, the head transpose of one summand only, a
 * layer-norm over a swapped axis, two slices swapped with their offsets,
 * the heads of a split part taken from another part or cut across heads,
 * a softmax or layer-norm of rows regrouped across the last axis, a
 * layer-norm of a tensor plus a bias of rank 1) is
 * neither proved
 * nor left standing: the
 * bounded check refutes it, also in the refute-only form xferverify runs for
 * rules the axioms did not prove. Rules are written in the axiom-instance language
 * (verify/axioms_instance_rule.c).
 */
#include "testutil.h"

#include "verify/verify.h"

#include <stdio.h>
#include <string.h>

static xf_verifier *verifier(void)
{
    xf_verify_options o;
    xf_verify_options_init(&o);
    o.timeout_ms = 20000;
    o.bounded_max_shapes = 4;
    xf_verifier *v = NULL;
    xf_error err;
    ck_assert_msg(xf_verifier_new(&o, &v, &err) == XF_OK, "%s", err.msg);
    return v;
}

/* `axiom` names the axioms the proof needs, comma-separated (NULL: a shape
 * fact of the encoder); with all of them off the rule is not proved. */
typedef struct family {
    const char *axiom;
    xf_axiom_instance rule;
} family;

static const family families[] = {
    {"layernorm-scale-ewadd,layernorm-scale-factor",
     {"ln-scale-sum", "x:2x4 g:4",
      "ewadd(layernorm[axis=1](x,g),ewadd(layernorm[axis=1](x,g),layernorm[axis=1](x,g)))",
      "layernorm[axis=1](x,ewadd(g,ewadd(g,g)))"}},
    {"layernorm-scale-smul,layernorm-scale-factor",
     {"ln-scale-smul", "m:2x3 y:3x4 g:4 s:", "smul(matmul(m,layernorm[axis=1](y,g)),s)",
      "matmul(m,layernorm[axis=1](y,smul(g,s)))"}},
    {"layernorm-concat-copies,layernorm-scale-factor",
     {"ln-of-copies", "x:2x4 g:4",
      "layernorm[axis=1](concat[axis=1](x,x),ewmul(concat[axis=0](g,g),concat[axis=0](g,g)))",
      "concat[axis=1](layernorm[axis=1](x,ewmul(g,g)),layernorm[axis=1](x,ewmul(g,g)))"}},
    {NULL,
     {"ln-of-one-element", "x:2x4 s:", "layernorm[axis=1](gelu(mean[axis=1](x)),s)",
      "mean[axis=1](layernorm[axis=1](x,s))"}},
    {NULL,
     {"centred-ln-in-a-sum", "m:4x4 s:", "ewadd(mean[axis=1](m),layernorm[axis=1](mean[axis=1](m),s))",
      "mean[axis=1](ewadd(layernorm[axis=1](m,s),m))"}},
    {"mean-slice,mean-concat",
     {"mean-of-slices", "x:2x4x3",
      "ewadd(split[axis=0,sizes=1x1,out=0](mean[axis=2](x)),split[axis=0,sizes=1x1,out=1](mean[axis=2](x)))",
      "mean[axis=2](ewadd(split[axis=0,sizes=1x1,out=0](x),split[axis=0,sizes=1x1,out=1](x)))"}},
    {"conv1x1-avgpool",
     {"conv1x1-pool", "x:2x4x3x3 w:4x4x1x1", "conv[p=same](avgpool[k=3,p=same](x),w)",
      "avgpool[k=3,p=same](conv[p=same](x,w))"}},
    {"conv1x1-mean",
     {"conv1x1-mean", "x:2x4x3x3 w:4x4x1x1", "ewadd(conv[p=same](mean[axis=3](x),w),mean[axis=3](x))",
      "mean[axis=3](ewadd(conv[p=same](x,w),x))"}},
    {NULL,
     {"stride-on-1x1", "x:4x4x1x1 w:4x4x3x3", "ewadd(x,conv[s=2,p=same](x,w))", "ewadd(x,conv[p=same](x,w))"}},
    {"conv1x1-enlarge",
     {"enlarged-image", "w:4x4x1x1",
      "conv[p=same,act=relu](w,conv[p=same,act=relu](enlarge[k=3](w),enlarge[k=3](w)))",
      "conv[p=same,act=relu](w,conv[p=same,act=relu](w,w))"}},
    {"enlarge-slice,enlarge-concat",
     {"enlarged-slices", "w:4x4x1x1",
      "ewmul(split[axis=0,sizes=2x2,out=1](enlarge[k=3](w)),relu(split[axis=0,sizes=2x2,out=0](enlarge[k=3](w))))",
      "enlarge[k=3](ewmul(split[axis=0,sizes=2x2,out=1](w),relu(split[axis=0,sizes=2x2,out=0](w))))"}},
    {"slice-concat-across,concat-interchange",
     {"slices-across", "w:4x4x1x1",
      "concat[axis=1](ewadd(split[axis=0,sizes=2x2,out=0](w),split[axis=0,sizes=2x2,out=1](w)),"
      "ewadd(split[axis=0,sizes=2x2,out=0](w),split[axis=0,sizes=2x2,out=1](w)))",
      "ewadd(split[axis=0,sizes=2x2,out=0](concat[axis=1](w,w)),split[axis=0,sizes=2x2,out=1](concat[axis=1](w,w)))"}},
    {"slice-within-right,concat-assoc-right",
     {"slice-within", "x:2x2 y:2x4",
      "split[axis=1,sizes=3x3,out=1](concat[axis=1](x,y))", "split[axis=1,sizes=1x3,out=1](y)"}},
    {"slice-trans,trans-slice,trans-concat",
     {"split-of-transposes", "w:4x4x3x3",
      "conv[p=same,act=relu](split[axis=1,sizes=2x2,out=0](trans(w)),split[axis=1,sizes=2x2,out=1](trans(w)))",
      "trans(conv[p=same,act=relu](split[axis=1,sizes=2x2,out=0](w),split[axis=1,sizes=2x2,out=1](w)))"}},
    {"concat-assoc-right,concat-assoc",
     {"split-rejoined", "m:4x4 n:4x4",
      "concat[axis=1](split[axis=1,sizes=2x2,out=0](m),concat[axis=1](split[axis=1,sizes=2x2,out=1](m),n))",
      "concat[axis=1](m,n)"}},
    {"slice-across-boundary,concat-assoc-right",
     {"slice-straddling", "x:2x4 y:2x4",
      "concat[axis=0](x,split[axis=0,sizes=1x1,out=0](y))", "split[axis=0,sizes=3x1,out=0](concat[axis=0](x,y))"}},
    {"conv-concat-kernel-channels,conv-concat-channels,conv-concat-input-channels",
     {"kernel-of-swapped-splits", "x:1x4x3x3 w:2x4x3x3",
      "conv[p=same,act=relu](x,concat[axis=1](split[axis=1,sizes=2x2,out=1](w),split[axis=1,sizes=2x2,out=0](w)))",
      "conv[p=same,act=relu](concat[axis=1](split[axis=1,sizes=2x2,out=1](x),split[axis=1,sizes=2x2,out=0](x)),w)"}},
    {"conv-trans-input,conv-trans-kernel",
     {"conv-of-transpose", "x:1x2x3x4 w:2x2x3x3", "trans(conv[s=2x1,p=same](trans(x),w))",
      "conv[s=1x2,p=same](x,trans(w))"}},
    {"layernorm-scale-factor",
     {"ln-scale-products", "g:4", "layernorm[axis=0](g,layernorm[axis=0](g,ewmul(g,g)))",
      "ewmul(layernorm[axis=0](g,g),layernorm[axis=0](g,g))"}},
    {"lnorm-scalar",
     {"ln-scale-square", "x:1x2x3x3 w:2x2x3x3 s:", "conv[p=same](smul(x,s),layernorm[axis=3](w,s))",
      "conv[p=same](x,layernorm[axis=3](w,ewmul(s,s)))"}},
    {NULL,
     {"avgpool-of-1x1-image", "w:4x4x1x1", "ewadd(avgpool[k=3,p=same](w),conv[p=same](w,avgpool[k=3,p=same](w)))",
      "avgpool[k=3,p=same](ewadd(w,conv[p=same](w,w)))"}},
    {"conv1x1-stride",
     {"strided-identity-kernel", "x:1x2x4x4 w:3x2x1x1",
      "conv[p=same](conv[s=2,p=same](x,iconv[shape=2x2x3x3]()),w)", "conv[s=2,p=same](x,enlarge[k=3](w))"}},
    {"conv-subsample",
     {"subsampled-conv", "x:1x2x4x4 w:2x2x3x3",
      "conv[s=2,p=same](conv[p=same,act=relu](x,w),iconv[shape=2x2x3x3]())", "relu(conv[s=2,p=same](x,w))"}},
    {"ewmul-ones",
     {"softmax-of-one-element", "x:2x4", "ewmul(mean[axis=1](x),softmax[axis=1](mean[axis=1](x)))",
      "mean[axis=1](x)"}},
    {"matmul-concat-batch",
     {"batched-product-of-split-parts", "b:2x2x2 s:",
      "concat[axis=0](smul(split[axis=0,sizes=1x1,out=0](matmul(b,b)),s),"
      "split[axis=0,sizes=1x1,out=1](matmul(b,b)))",
      "matmul(b,concat[axis=0](smul(split[axis=0,sizes=1x1,out=0](b),s),"
      "split[axis=0,sizes=1x1,out=1](b)))"}},
    {"concat-ones",
     {"softmax-of-one-element-concat", "w:2x2x1x1",
      "concat[axis=0](softmax[axis=3](w),softmax[axis=3](w))", "softmax[axis=3](concat[axis=0](w,w))"}},
    {"conv-avgpool-kernel",
     {"pooled-identity-kernel", "x:1x2x4x4", "conv[p=same,act=relu](x,avgpool[k=3,p=same](iconv[shape=2x2x3x3]()))",
      "relu(avgpool[k=3,p=same](x))"}},
    /* the extended vocabulary's 4-operator run: a bias or scalar operand
     * beside a concat, slice, mean, transpose or batched matmul, and head
     * reshapes beside a concat or slice along an axis they keep */
    {"concat-bias,pow-concat",
     {"scalar-through-concat", "x:2x1x4 y:2x3x4 s:",
      "concat[axis=1](pow(ewadd(x,s),s),pow(ewadd(y,s),s))", "pow(ewadd(concat[axis=1](x,y),s),s)"}},
    {"matmul-concat-batch-bcast",
     {"batch-concat-by-matrix", "b:1x2x2 c:2x2x2 m:2x3", "concat[axis=0](matmul(b,m),matmul(c,m))",
      "matmul(concat[axis=0](b,c),m)"}},
    {"trans-scalar-ewadd",
     {"transpose-of-scalar-sum", "m:3x4 s:", "trans(ewadd(m,s))", "ewadd(trans(m),s)"}},
    {"mean-bias",
     {"mean-of-scalar-sum", "m:3x4 s:", "mean[axis=1](ewadd(m,s))", "ewadd(mean[axis=1](m),s)"}},
    {"slice-bias,slice-bias-left,concat-bias",
     {"slice-of-scalar-sum", "b:2x4x4 s:", "split[axis=0,sizes=1x1,out=0](ewmul(tanh(ewadd(b,s)),b))",
      "ewmul(split[axis=0,sizes=1x1,out=0](b),tanh(ewadd(split[axis=0,sizes=1x1,out=0](b),s)))"}},
    {"hsplit-slice,hsplit-concat",
     {"batch-slice-of-heads", "b:2x4x4",
      "ewadd(ewmul(split[axis=0,sizes=1x1,out=1](reshape[shape=2x4x2x2](b)),"
      "split[axis=0,sizes=1x1,out=0](reshape[shape=2x4x2x2](b))),split[axis=0,sizes=1x1,out=1](reshape[shape=2x4x2x2](b)))",
      "reshape[shape=1x4x2x2](ewadd(split[axis=0,sizes=1x1,out=1](b),"
      "ewmul(split[axis=0,sizes=1x1,out=0](b),split[axis=0,sizes=1x1,out=1](b))))"}},
    {"hmerge-concat",
     {"slice-of-merged-concat", "w:4x4x1x1 s:",
      "split[axis=1,sizes=1x7,out=0](pow(reshape[shape=4x8x1](concat[axis=1](w,w)),s))",
      "pow(split[axis=1,sizes=1x3,out=0](reshape[shape=4x4x1](w)),s)"}},
    /* attention's 4-D layout at 3 operators: a position slice through a
     * 1x1 convolution and a batched matmul, the head transpose through a
     * sum, a product and a layer-norm */
    {"conv1x1-slice-spatial,slice-ewadd",
     {"slice-of-residual-1x1-conv", "x:1x2x4x3 w:2x2x1x1",
      "ewadd(split[axis=2,sizes=1x3,out=0](x),conv[p=valid](split[axis=2,sizes=1x3,out=0](x),w))",
      "split[axis=2,sizes=1x3,out=0](ewadd(x,conv[p=valid](x,w)))"}},
    /* (a split's parts also rejoin as its input, so the concat laws are a
     * second route here: they go off too) */
    {"matmul-slice-batch,layernorm-slice,matmul-concat-batch,layernorm-concat",
     {"batch-slice-of-matmul-by-layernorm", "x:2x2x2x2 g:2",
      "matmul(split[axis=1,sizes=1x1,out=0](x),layernorm[axis=3](split[axis=1,sizes=1x1,out=0](x),g))",
      "split[axis=1,sizes=1x1,out=0](matmul(x,layernorm[axis=3](x,g)))"}},
    {"tswap-ewmul,layernorm-tswap",
     {"head-transpose-times-layernorm", "x:1x2x3x2 g:2",
      "ewmul(tswap[axis=-3](x),layernorm[axis=3](tswap[axis=-3](x),g))",
      "tswap[axis=-3](ewmul(x,layernorm[axis=3](x,g)))"}},
    {"slice-slice,slice-concat-across", /* (a split's parts rejoin as its input: a second route) */
     {"position-slices-swapped", "x:2x4x4x4 y:2x4x4x4",
      "split[axis=1,sizes=1x3,out=0](split[axis=2,sizes=1x3,out=0](ewadd(x,y)))",
      "split[axis=2,sizes=1x3,out=0](ewadd(split[axis=1,sizes=1x3,out=0](x),split[axis=1,sizes=1x3,out=0](y)))"}},
    /* GPT's merged Q/K/V: the heads of a part of the last axis are a slice
     * of the heads of the whole (two parts, and three: Q, K, V) */
    {"hsplit-slice-last",
     {"heads-of-a-split-part", "x:2x2x8", "reshape[shape=2x2x2x2](split[axis=2,sizes=4x4,out=1](x))",
      "split[axis=2,sizes=2x2,out=1](reshape[shape=2x2x4x2](x))"}},
    {"hsplit-slice-last",
     {"heads-of-a-third", "x:2x12", "relu(reshape[shape=2x2x2](split[axis=1,sizes=4x4x4,out=1](x)))",
      "relu(split[axis=1,sizes=2x2x2,out=1](reshape[shape=2x6x2](x)))"}},
    /* the last-axis softmax and layer-norms through a reshape that keeps the
     * last axis, layer-norms of a tensor plus a scalar, and a reshape of a
     * sum or scalar product taken apart (the reverse triggers). A reshape
     * that is no flatten or split keeps its literal target (ir/rule_dims.c),
     * so x's last dim is pinned to it on both sides (by a scale): without
     * that the rule is false where x's last axis moves, and the lastd guard
     * rightly fails; a flatten of three axes keeps it symbolically */
    {"softmax-view",
     {"softmax-of-regrouped-rows", "x:2x2x3x4 y:2x2x3x4",
      "ewadd(softmax[axis=-1](reshape[shape=12x4](x)),reshape[shape=12x4](y))",
      "reshape[shape=12x4](ewadd(softmax[axis=-1](x),y))"}},
    {"layernorm-view",
     {"layernorm-of-regrouped-rows", "x:2x3x4 g:4 c:4",
      "relu(layernorm[axis=-1](reshape[shape=3x2x4](x),g,c))", "reshape[shape=3x2x4](relu(layernorm[axis=-1](x,g,c)))"}},
    {"lnorm-view",
     {"lnorm-of-regrouped-rows", "x:2x3x4 g:4",
      "ewmul(layernorm[axis=-1](reshape[shape=3x2x4](x),ones[shape=4]()),g)",
      "reshape[shape=3x2x4](ewmul(layernorm[axis=-1](x,ones[shape=4]()),g))"}},
    {"layernorm-shift",
     {"layernorm-of-shifted", "x:2x3 g:3 c:3 s:", "layernorm[axis=1](ewadd(s,relu(x)),g,c)",
      "layernorm[axis=1](relu(x),g,c)"}},
    {"lnorm-shift",
     {"lnorm-of-shifted", "x:2x3 s:", "matmul(x,layernorm[axis=0](ewadd(trans(x),s),ones[shape=3x2]()))",
      "matmul(x,layernorm[axis=0](trans(x),ones[shape=3x2]()))"}},
    {"ewadd-view",
     {"product-of-reshaped-sum", "x:2x3x4 y:2x3x4 w:4x2", "matmul(reshape[shape=3x2x4](ewadd(x,y)),w)",
      "ewadd(matmul(reshape[shape=3x2x4](x),w),matmul(reshape[shape=3x2x4](y),w))"}},
    {"smul-view",
     {"product-of-reshaped-scalar-product", "x:2x3x4 w:4x2 s:", "matmul(reshape[shape=3x2x4](smul(x,s)),w)",
      "smul(matmul(reshape[shape=3x2x4](x),w),s)"}},
    {"tswap-ewadd,softmax-tswap",
     {"head-transpose-plus-softmax", "x:1x2x3x2", "ewadd(tswap[axis=-3](x),softmax[axis=3](tswap[axis=-3](x)))",
      "tswap[axis=-3](ewadd(x,softmax[axis=3](x)))"}},
};

static const xf_axiom_instance near_misses[] = {
    {"ln-bias-twice", "x:2x3 g:3 h:3 c:3", "layernorm[axis=1](x,ewadd(g,h),c)",
     "ewadd(layernorm[axis=1](x,g,c),layernorm[axis=1](x,h,c))"},
    {"ln-of-two-parts", "x:2x3 y:2x3 g:3", "layernorm[axis=1](concat[axis=1](x,y),concat[axis=0](g,g))",
     "concat[axis=1](layernorm[axis=1](x,g),layernorm[axis=1](y,g))"},
    {"conv-stride2-pool", "x:1x2x4x4 w:3x2x1x1", "conv[s=2,p=same](avgpool[k=3,p=same](x),w)",
     "avgpool[k=3,p=same](conv[s=2,p=same](x,w))"},
    {"conv3x3-mean", "x:1x2x3x3 w:2x2x3x3", "mean[axis=3](conv[p=same](x,w))", "conv[p=same](mean[axis=3](x),w)"},
    {"sigmoid-enlarge", "x:2x2x1x1 w:2x2x1x1", "conv[p=same,act=sigmoid](enlarge[k=3](x),w)",
     "enlarge[k=3](conv[p=same,act=sigmoid](x,w))"},
    {"mean-of-scaled-layernorm", "x:2x4 g:4 s:", "mean[axis=1](layernorm[axis=1](x,g))",
     "mean[axis=1](layernorm[axis=1](x,s))"},
    {"slice-wrong-offset", "x:2x2 y:2x4", "split[axis=1,sizes=3x3,out=1](concat[axis=1](x,y))",
     "split[axis=1,sizes=3x1,out=0](y)"},
    {"split-rejoined-swapped", "m:4x4 n:4x4",
     "concat[axis=1](split[axis=1,sizes=2x2,out=1](m),concat[axis=1](split[axis=1,sizes=2x2,out=0](m),n))",
     "concat[axis=1](m,n)"},
    {"slice-straddling-wrong-part", "x:2x4 y:2x4",
     "concat[axis=0](x,split[axis=0,sizes=1x1,out=1](y))", "split[axis=0,sizes=3x1,out=0](concat[axis=0](x,y))"},
    {"kernel-of-swapped-splits-only", "x:1x4x3x3 w:2x4x3x3",
     "conv[p=same](x,concat[axis=1](split[axis=1,sizes=2x2,out=1](w),split[axis=1,sizes=2x2,out=0](w)))",
     "conv[p=same](x,w)"},
    {"conv-of-transpose-unswapped", "x:1x2x3x4 w:2x2x3x3", "trans(conv[s=2x1,p=same](trans(x),w))",
     "conv[s=1x2,p=same](x,w)"},
    {"ln-scale-square-of-product", "g:4", "layernorm[axis=0](g,layernorm[axis=0](g,g))",
     "ewmul(layernorm[axis=0](g,g),layernorm[axis=0](g,g))"},
    {"ln-scale-square-once", "x:1x2x3x3 w:2x2x3x3 s:", "conv[p=same](x,layernorm[axis=2](w,s))",
     "conv[p=same](x,layernorm[axis=2](w,ewmul(s,s)))"},
    {"avgpool-of-1x1-image-dropped", "w:4x4x1x1", "conv[p=same](w,avgpool[k=3,p=same](w))", "conv[p=same](w,w)"},
    {"strided-identity-kernel-relu", "x:1x2x4x4 w:3x2x1x1",
     "conv[p=same,act=relu](conv[s=2,p=same](x,iconv[shape=2x2x3x3]()),w)", "conv[s=2,p=same](x,enlarge[k=3](w))"},
    {"subsample-of-valid-conv", "x:1x2x4x4 w:2x2x3x3",
     "conv[s=2,p=same](conv[p=same](x,w),iconv[shape=2x2x3x3]())", "conv[s=2,p=same](x,trans(w))"},
    {"softmax-of-two-elements", "x:2x2", "ewmul(x,softmax[axis=1](x))", "x"},
    {"split-parts-swapped", "b:2x2x2",
     "concat[axis=0](split[axis=0,sizes=1x1,out=1](matmul(b,b)),split[axis=0,sizes=1x1,out=0](matmul(b,b)))",
     "matmul(b,b)"},
    {"softmax-of-one-element-concat-with-input", "w:2x2x1x1",
     "concat[axis=0](softmax[axis=3](w),w)", "softmax[axis=3](concat[axis=0](w,w))"},
    {"enlarged-identity-kernel-unpooled", "x:1x2x4x4", "conv[p=same](x,iconv[shape=2x2x3x3]())",
     "avgpool[k=3,p=same](x)"},
    {"transpose-of-bias-sum", "m:3x3 g:3", "trans(ewadd(m,g))", "ewadd(trans(m),g)"},
    {"mean-of-bias-sum-along-it", "m:3x4 g:4", "mean[axis=1](ewadd(m,g))",
     "ewadd(mean[axis=1](m),split[axis=0,sizes=1x3,out=0](g))"},
    {"bias-on-one-part", "x:1x4 y:2x4 g:4", "ewadd(concat[axis=0](x,y),g)", "concat[axis=0](ewadd(x,g),y)"},
    {"batch-concat-by-matrix-swapped", "b:1x2x2 c:1x2x2 m:2x3", "concat[axis=0](matmul(c,m),matmul(b,m))",
     "matmul(concat[axis=0](b,c),m)"},
    {"batch-slice-of-heads-wrong-part", "b:2x4x4", "split[axis=0,sizes=1x1,out=1](reshape[shape=2x4x2x2](b))",
     "reshape[shape=1x4x2x2](split[axis=0,sizes=1x1,out=0](b))"},
    {"slices-swapped-with-their-offsets", "x:2x2", "split[axis=0,sizes=1x1,out=1](split[axis=1,sizes=1x1,out=0](x))",
     "split[axis=1,sizes=1x1,out=1](split[axis=0,sizes=1x1,out=0](x))"},
    {"slice-of-3x3-conv", "x:1x2x4x4 w:2x2x3x3", "split[axis=2,sizes=1x3,out=0](conv[p=same](x,w))",
     "conv[p=same](split[axis=2,sizes=1x3,out=0](x),w)"},
    {"batch-slice-of-matmul-other-part", "x:3x2x2 y:3x2x2", "split[axis=0,sizes=1x2,out=1](matmul(x,y))",
     "matmul(split[axis=0,sizes=1x2,out=1](x),split[axis=0,sizes=2x1,out=0](y))"},
    {"head-transpose-of-one-summand", "x:1x2x2x2 y:1x2x2x2", "tswap[axis=-3](ewadd(x,y))",
     "ewadd(tswap[axis=-3](x),y)"},
    {"heads-of-a-split-part-other-part", "x:2x2x8",
     "reshape[shape=2x2x2x2](split[axis=2,sizes=4x4,out=1](x))",
     "split[axis=2,sizes=2x2,out=0](reshape[shape=2x2x4x2](x))"},
    {"heads-of-a-third-cut-across-heads", "x:2x12",
     "reshape[shape=2x2x2](split[axis=1,sizes=4x4x4,out=1](x))",
     "split[axis=2,sizes=2x2x2,out=1](reshape[shape=2x2x6](x))"},
    /* rows regrouped across the last axis (6 -> 4), and a shift that is
     * not one number (a bias of rank 1) */
    {"softmax-of-rows-regrouped-across", "x:2x3x4", "softmax[axis=-1](reshape[shape=2x4x3](x))",
     "reshape[shape=2x4x3](softmax[axis=-1](x))"},
    {"layernorm-of-rows-regrouped-across", "x:2x3x4 s:", "layernorm[axis=-1](reshape[shape=2x4x3](x),s)",
     "reshape[shape=2x4x3](layernorm[axis=-1](x,s))"},
    {"lnorm-of-rows-regrouped-across", "x:2x3x4", "layernorm[axis=-1](reshape[shape=2x4x3](x),ones[shape=3]())",
     "reshape[shape=2x4x3](layernorm[axis=-1](x,ones[shape=4]()))"},
    {"layernorm-of-bias-sum", "x:2x3 g:3 b:3", "layernorm[axis=1](ewadd(x,b),g)", "layernorm[axis=1](x,g)"},
    {"lnorm-of-bias-sum", "x:2x3 b:3", "layernorm[axis=1](ewadd(b,x),ones[shape=3]())",
     "layernorm[axis=1](x,ones[shape=3]())"},
    {"layernorm-over-a-swapped-axis", "x:1x2x3x2",
     "layernorm[axis=2](tswap[axis=-3](x),ones[shape=2x2]())",
     "tswap[axis=-3](layernorm[axis=2](x,ones[shape=3x2]()))"},
};

static void build(const xf_axiom_instance *in, xf_rule *r)
{
    xf_error err;
    ck_assert_msg(xf_verify_axiom_instance_rule(in, r, &err) == XF_OK, "%s", err.msg);
}

static xf_proof prove(xf_verifier *v, const xf_rule *r, const char *name)
{
    xf_proof pf;
    xf_error err;
    ck_assert_msg(xf_verify_prove(v, r, &pf, &err) == XF_OK, "%s: %s", name, err.msg);
    fprintf(stderr, "  %-24s %-8s %7.1f ms  [%s]%s%s\n", name, xf_proof_result_name(pf.result),
            pf.time_ms, pf.core_names, pf.detail[0] ? "  " : "", pf.detail);
    return pf;
}

static xf_bounded_result bounded(xf_verifier *v, const xf_rule *r, const char *name)
{
    xf_bounded b;
    xf_bounded_init(&b);
    xf_error err;
    ck_assert_msg(xf_verify_bounded(v, r, &b, &err) == XF_OK, "%s: %s", name, err.msg);
    xf_bounded_result res = b.result;
    fprintf(stderr, "  %-24s bounded %s: %s\n", name, xf_bounded_result_name(res), b.detail);
    xf_bounded_free(&b);
    return res;
}

START_TEST(test_family_proved)
{
    xf_verifier *v = verifier();
    const family *f = &families[_i];
    xf_rule r;
    build(&f->rule, &r);
    xf_proof pf = prove(v, &r, f->rule.axiom);
    ck_assert_msg(pf.result == XF_PROOF_PROVED, "%s: %s (%s)", f->rule.axiom, xf_proof_result_name(pf.result),
                  pf.detail);
    ck_assert_int_ne(bounded(v, &r, f->rule.axiom), XF_BOUNDED_REFUTED);
    if (f->axiom) {
        char names[128];
        snprintf(names, sizeof names, "%s", f->axiom);
        for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            int i = xf_verify_axiom_find(name);
            ck_assert_msg(i >= 0, "no axiom %s", name);
            xf_error err;
            ck_assert_int_eq(xf_verifier_set_axiom(v, i, 0, &err), XF_OK);
        }
        pf = prove(v, &r, f->rule.axiom);
        ck_assert_msg(pf.result != XF_PROOF_PROVED, "%s proved without %s (by %s)", f->rule.axiom,
                      f->axiom, pf.core_names);
    }
    xf_rule_free(&r);
    xf_verifier_free(v);
}
END_TEST

/* ---- attention's 4-D layout (issue 28): a class token's slice moved up
 * through the head transpose [B,S,h,d] <-> [B,h,S,d] (tswap -3), the merge
 * of the heads and the split of the last axis, and softmax commuting with
 * the transpose. Built node by node: the axiom-instance language has no
 * permutations or reshapes. */

/* 0 ends a chain */
enum { VIEW_SLICE = 1, VIEW_SWAP, VIEW_SOFTMAX, VIEW_RESHAPE, VIEW_PERM, VIEW_SQUEEZE, VIEW_UNSQUEEZE };

/* One operator of a view rule: kind, slice axis, reshape target (a
 * permutation's axes for VIEW_PERM). */
typedef struct view_step {
    int kind, axis;
    int rank;
    int64_t dims[4];
} view_step;

/* A rule src => dst over one input of `in_dims`, each side a chain of at
 * most 4 steps applied in order; the slices take [start, start + 1). */
typedef struct view_rule {
    const char *name, *axioms;
    int in_rank;
    int64_t in_dims[4];
    view_step src[4], dst[4];
    int start_src, start_dst;
} view_rule;

static int view_apply(xf_graph *g, int x, const view_step *s, int start)
{
    xf_params p = xf_params_default();
    switch (s->kind) {
    case VIEW_SLICE:
        p.n_axes = 1;
        p.axes[0] = s->axis;
        p.starts[0] = start;
        p.ends[0] = start + 1;
        p.steps[0] = 1;
        return xf_test_op2(g, XF_OP_SLICE, &p, x, -1);
    case VIEW_SWAP:
        p.n_axes = 4;
        p.axes[0] = 0, p.axes[1] = 2, p.axes[2] = 1, p.axes[3] = 3;
        return xf_test_op2(g, XF_OP_TRANSPOSE, &p, x, -1);
    case VIEW_SOFTMAX:
        p.axis = -1;
        return xf_test_op2(g, XF_OP_SOFTMAX, &p, x, -1);
    case VIEW_PERM:
        p.n_axes = s->rank;
        for (int i = 0; i < s->rank; i++) p.axes[i] = s->dims[i];
        return xf_test_op2(g, XF_OP_TRANSPOSE, &p, x, -1);
    case VIEW_SQUEEZE:
    case VIEW_UNSQUEEZE:
        p.n_axes = 1;
        p.axes[0] = s->axis;
        return xf_test_op2(g, s->kind == VIEW_SQUEEZE ? XF_OP_SQUEEZE : XF_OP_UNSQUEEZE, &p, x, -1);
    default: return xf_test_reshape(g, x, xf_shape_make(s->rank, s->dims));
    }
}

static void view_build(const view_rule *vr, xf_rule *r)
{
    xf_rule_init(r);
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        const view_step *steps = side ? vr->dst : vr->src;
        int x = xf_test_input(g, "x", vr->in_rank, vr->in_dims);
        for (int i = 0; i < 4 && steps[i].kind; i++)
            x = view_apply(g, x, &steps[i], side ? vr->start_dst : vr->start_src);
        xf_test_out(g, x);
    }
    xf_error err;
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s: %s", vr->name, err.msg);
}

#define SL(ax) {VIEW_SLICE, ax, 0, {0}}
#define SW {VIEW_SWAP, 0, 0, {0}}
#define SM {VIEW_SOFTMAX, 0, 0, {0}}
#define RS(r, a, b, c, d) {VIEW_RESHAPE, 0, r, {a, b, c, d}}
#define PM(a, b, c, d) {VIEW_PERM, 0, 4, {a, b, c, d}}
#define SQ(ax) {VIEW_SQUEEZE, ax, 0, {0}}
#define UNSQ(ax) {VIEW_UNSQUEEZE, ax, 0, {0}}

static const view_rule view_rules[] = {
    {"slice-of-head-transpose", "slice-tswap,tswap-slice", 4, {2, 4, 4, 4}, {SL(1), SW}, {SW, SL(2)}, 0, 0},
    {"head-transpose-twice", "tswap-involution", 4, {2, 4, 3, 4}, {SW, SW, SM}, {SM}, 0, 0},
    {"softmax-of-head-transpose", "softmax-tswap", 4, {2, 4, 3, 4}, {SW, SM}, {SM, SW}, 0, 0},
    {"slice-of-split-heads", "hsplit-slice", 3, {2, 4, 4}, {RS(4, 2, 4, 2, 2), SL(1)},
     {SL(1), RS(4, 2, 1, 2, 2)}, 0, 0},
    {"slice-of-merged-heads", "hmerge-slice", 4, {2, 4, 2, 2}, {RS(3, 2, 4, 4, 0), SL(1)},
     {SL(1), RS(3, 2, 1, 4, 0)}, 0, 0},
    /* permutations that are no single swap, encoded as the swaps that sort
     * them: attention's key transpose [B,S,h,d] -> [B,h,d,S] (trans after
     * tswap -3) and the split layout's [S,3,h,d] -> [3,h,S,d] (tswap -3
     * after tswap -4); a slice moves across each swap */
    {"slice-of-key-transpose", "trans-slice,slice-trans,tswap-slice,slice-tswap", 4, {2, 4, 3, 4}, {PM(0, 2, 3, 1), SL(3)},
     {SL(1), PM(0, 2, 3, 1)}, 0, 0},
    {"slice-of-split-layout", "tswap-slice,slice-tswap", 4, {4, 3, 2, 2}, {PM(1, 2, 0, 3), SL(0)},
     {SL(1), PM(1, 2, 0, 3)}, 1, 1},
    /* GPT's head transpose in the form ONNX Runtime folds into its
     * FusedMatMul (issue 28): [1,S,H] -> [1,S,h,d] -> [1,h,S,d] is
     * [1,S,H] -> [S,H] -> [S,1,H] -> [S,1,h,d] -> [1,h,S,d] (perm 1,2,0,3,
     * whose swap of S with the unit axis the squeeze pins moves no element:
     * a view), and the key's 0,2,3,1 is 1,2,3,0 there */
    {"heads-unbatched", "view-view", 3, {1, 4, 4}, {RS(4, 1, 4, 2, 2), PM(0, 2, 1, 3)},
     {SQ(0), UNSQ(1), RS(4, 4, 1, 2, 2), PM(1, 2, 0, 3)}, 0, 0},
    {"key-heads-unbatched", "view-view", 3, {1, 4, 4}, {RS(4, 1, 4, 2, 2), PM(0, 2, 3, 1)},
     {SQ(0), UNSQ(1), RS(4, 4, 1, 2, 2), PM(1, 2, 3, 0)}, 0, 0},
};

/* near misses: the slice taken at another position after the transpose or
 * the reshape */
static const view_rule view_misses[] = {
    {"slice-of-head-transpose-elsewhere", NULL, 4, {2, 4, 4, 4}, {SL(1), SW}, {SW, SL(2)}, 0, 1},
    {"slice-of-split-heads-elsewhere", NULL, 3, {2, 4, 4}, {RS(4, 2, 4, 2, 2), SL(1)},
     {SL(1), RS(4, 2, 1, 2, 2)}, 0, 1},
    {"slice-of-key-transpose-elsewhere", NULL, 4, {2, 4, 3, 4}, {PM(0, 2, 3, 1), SL(3)},
     {SL(1), PM(0, 2, 3, 1)}, 0, 1},
    {"slice-of-split-layout-elsewhere", NULL, 4, {4, 3, 2, 2}, {PM(1, 2, 0, 3), SL(0)},
     {SL(1), PM(1, 2, 0, 3)}, 1, 0},
    /* the unbatched heads at a batch of 2: [2,S,H] read as [S,2,h,d] is
     * not the batch moved behind S */
    {"heads-unbatched-at-batch-2", NULL, 3, {2, 4, 4}, {RS(4, 2, 4, 2, 2), PM(0, 2, 1, 3)},
     {RS(4, 4, 2, 2, 2), PM(1, 2, 0, 3)}, 0, 0},
    /* the head and head-dim axes taken the wrong way round: perm 1,3,0,2 */
    {"heads-unbatched-wrong-perm", NULL, 3, {1, 4, 4}, {RS(4, 1, 4, 2, 2), PM(0, 2, 1, 3)},
     {SQ(0), UNSQ(1), RS(4, 4, 1, 2, 2), PM(1, 3, 0, 2)}, 0, 0},
};

START_TEST(test_view_family_proved)
{
    xf_verifier *v = verifier();
    const view_rule *vr = &view_rules[_i];
    xf_rule r;
    view_build(vr, &r);
    xf_proof pf = prove(v, &r, vr->name);
    ck_assert_msg(pf.result == XF_PROOF_PROVED, "%s: %s (%s)", vr->name, xf_proof_result_name(pf.result),
                  pf.detail);
    ck_assert_int_ne(bounded(v, &r, vr->name), XF_BOUNDED_REFUTED);
    char names[128];
    snprintf(names, sizeof names, "%s", vr->axioms);
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int i = xf_verify_axiom_find(name);
        ck_assert_msg(i >= 0, "no axiom %s", name);
        xf_error err;
        ck_assert_int_eq(xf_verifier_set_axiom(v, i, 0, &err), XF_OK);
    }
    pf = prove(v, &r, vr->name);
    ck_assert_msg(pf.result != XF_PROOF_PROVED, "%s proved without %s (by %s)", vr->name, vr->axioms,
                  pf.core_names);
    xf_rule_free(&r);
    xf_verifier_free(v);
}
END_TEST

START_TEST(test_view_near_miss_refuted)
{
    xf_verifier *v = verifier();
    const view_rule *vr = &view_misses[_i];
    xf_rule r;
    view_build(vr, &r);
    xf_proof pf = prove(v, &r, vr->name);
    ck_assert_msg(pf.result != XF_PROOF_PROVED, "%s: proved", vr->name);
    ck_assert_msg(bounded(v, &r, vr->name) == XF_BOUNDED_REFUTED, "%s: not refuted", vr->name);
    xf_rule_free(&r);
    xf_verifier_free(v);
}
END_TEST

START_TEST(test_near_miss_refuted)
{
    xf_verifier *v = verifier();
    const xf_axiom_instance *in = &near_misses[_i];
    xf_rule r;
    build(in, &r);
    xf_proof pf = prove(v, &r, in->axiom);
    ck_assert_msg(pf.result != XF_PROOF_PROVED, "%s: proved", in->axiom);
    ck_assert_msg(bounded(v, &r, in->axiom) == XF_BOUNDED_REFUTED, "%s: not refuted", in->axiom);
    xf_rule_free(&r);
    xf_verifier_free(v);
}
END_TEST

/* The refute-only check xferverify runs for rules the axioms did not prove:
 * exact at the own shapes, floats at the others. It still finds a
 * refutation that exists only at other shapes, refutes the near misses at
 * their own shapes, and says what it checked when nothing refutes. */
START_TEST(test_refute_only)
{
    xf_verifier *v = verifier();
    xf_axiom_instance other = {"square-only", "x:1x1", "trans(x)", "x"};
    xf_axiom_instance unproved = {"ln-products", "x:2x4 g:4 h:4",
                                  "ewmul(layernorm[axis=1](x,g),layernorm[axis=1](x,h))",
                                  "ewmul(layernorm[axis=1](x,h),layernorm[axis=1](x,g))"};
    xf_rule r;
    xf_bounded b;
    xf_bounded_init(&b);
    xf_error err;
    build(&other, &r);
    ck_assert_int_eq(xf_verify_bounded_refute(v, &r, &b, &err), XF_OK);
    ck_assert_int_eq(b.result, XF_BOUNDED_REFUTED);
    ck_assert_int_gt(b.shape_index, 0);
    xf_test_expect_contains(b.detail, "not the rule's own");
    xf_rule_free(&r);
    for (size_t k = 0; k < sizeof near_misses / sizeof near_misses[0]; k++) {
        build(&near_misses[k], &r);
        ck_assert_int_eq(xf_verify_bounded_refute(v, &r, &b, &err), XF_OK);
        ck_assert_msg(b.result == XF_BOUNDED_REFUTED, "%s: %s", near_misses[k].axiom,
                      xf_bounded_result_name(b.result));
        xf_rule_free(&r);
    }
    build(&unproved, &r);
    ck_assert_int_eq(xf_verify_bounded_refute(v, &r, &b, &err), XF_OK);
    ck_assert_int_eq(b.result, XF_BOUNDED_VALID);
    xf_test_expect_contains(b.detail, "floats agree at");
    xf_test_expect_contains(b.detail, "exact check only at the own shapes");
    xf_rule_free(&r);
    xf_bounded_free(&b);
    xf_verifier_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_families");
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_family_proved, 0, (int)(sizeof families / sizeof families[0]));
    tcase_add_loop_test(tc, test_near_miss_refuted, 0, (int)(sizeof near_misses / sizeof near_misses[0]));
    tcase_add_test(tc, test_refute_only);
    tcase_add_loop_test(tc, test_view_family_proved, 0, (int)(sizeof view_rules / sizeof view_rules[0]));
    tcase_add_loop_test(tc, test_view_near_miss_refuted, 0,
                        (int)(sizeof view_misses / sizeof view_misses[0]));
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
