/*
 * axiom_instances.c — concrete instances of the axioms (axioms.c): for each
 * axiom one or more small rules with its parameters fixed to representative
 * values (2x2 / 2x3 matrices, [1,2,3,3] images, [2,2,3,3] kernels; split
 * points, strides and axes chosen so the instance exercises the axiom's
 * conditions). `xferverify --check-axioms` runs the bounded element-wise
 * check on each: an axiom whose instance the bounded check refutes is
 * wrong. The expression language is documented in axioms_instance_rule.c.
 */
#include "verify/verify.h"

#define M2 "x:2x2 y:2x2"
#define M3 "x:2x2 y:2x2 z:2x2"
#define IMG "x:1x2x3x3 y:1x2x3x3 w:2x2x3x3"
#define SPL "split[axis=1,sizes=1x2,out=1]"

/* An element-wise unary function commutes with transpose, concat and split. */
#define UNARY(f)                                                                                   \
    {f "-trans", "x:2x3", f "(trans(x))", "trans(" f "(x))"},                                  \
    {f "-concat", "x:2x1 y:2x2", f "(concat[axis=1](x,y))", "concat[axis=1](" f "(x)," f "(y))"}, \
    {f "-slice", "x:2x3", f "(" SPL "(x))", SPL "(" f "(x))"}

static const xf_axiom_instance instances[] = {
    /* ---- element-wise arithmetic */
    {"ewadd-comm", M2, "ewadd(x,y)", "ewadd(y,x)"},
    {"ewadd-assoc", M3, "ewadd(x,ewadd(y,z))", "ewadd(ewadd(x,y),z)"},
    {"ewmul-comm", M2, "ewmul(x,y)", "ewmul(y,x)"},
    {"ewmul-assoc", M3, "ewmul(x,ewmul(y,z))", "ewmul(ewmul(x,y),z)"},
    {"ewmul-ewadd-distrib", M3, "ewmul(ewadd(x,y),z)", "ewadd(ewmul(x,z),ewmul(y,z))"},
    {"ewmul-ones", "x:2x3", "ewmul(x,ones[shape=2x3]())", "x"},
    {"smul-ewadd-distrib", M2 " s:", "smul(ewadd(x,y),s)", "ewadd(smul(x,s),smul(y,s))"},
    {"smul-scalar-distrib", "x:2x2 s: r:", "smul(x,ewadd(s,r))", "ewadd(smul(x,s),smul(x,r))"},
    {"smul-as-ewmul", "x:2x2 s:", "smul(x,s)", "ewmul(x,s)"},
    {"smul-smul", "x:2x2 s: r:", "smul(smul(x,s),r)", "smul(x,ewmul(s,r))"},
    {"smul-ewmul", M2 " s:", "smul(ewmul(x,y),s)", "ewmul(smul(x,s),y)"},
    /* ---- matmul */
    {"matmul-assoc", "x:2x3 y:3x2 z:2x2", "matmul(x,matmul(y,z))", "matmul(matmul(x,y),z)"},
    {"matmul-assoc", "x:2x1x2 y:2x2x2 z:2x2x1", "matmul(x,matmul(y,z))", "matmul(matmul(x,y),z)"},
    {"matmul-linear-left", "x:2x3 y:2x3 z:3x2", "matmul(ewadd(x,y),z)", "ewadd(matmul(x,z),matmul(y,z))"},
    {"matmul-linear-right", "x:2x3 y:3x2 z:3x2", "matmul(x,ewadd(y,z))", "ewadd(matmul(x,y),matmul(x,z))"},
    {"matmul-smul-left", "x:2x3 y:3x2 s:", "matmul(smul(x,s),y)", "smul(matmul(x,y),s)"},
    {"matmul-smul-right", "x:2x3 y:3x2 s:", "matmul(x,smul(y,s))", "smul(matmul(x,y),s)"},
    {"matmul-identity-right", "x:2x3", "matmul(x,imat[shape=3x3]())", "x"},
    {"matmul-identity-left", "x:2x3", "matmul(imat[shape=2x2](),x)", "x"},
    {"matmul-trans", "x:2x3 y:3x2", "trans(matmul(x,y))", "matmul(trans(y),trans(x))"},
    {"matmul-concat-right", "x:2x2 y:2x1 z:2x2", "matmul(x,concat[axis=1](y,z))",
     "concat[axis=1](matmul(x,y),matmul(x,z))"},
    {"matmul-concat-left", "x:1x2 y:2x2 z:2x2", "matmul(concat[axis=0](x,y),z)",
     "concat[axis=0](matmul(x,z),matmul(y,z))"},
    {"matmul-concat-inner", "x:2x1 y:2x2 u:1x2 w:2x2", "matmul(concat[axis=1](x,y),concat[axis=0](u,w))",
     "ewadd(matmul(x,u),matmul(y,w))"},
    {"matmul-concat-batch", "x:1x2x2 y:1x2x2 u:1x2x2 w:1x2x2", "matmul(concat[axis=0](x,y),concat[axis=0](u,w))",
     "concat[axis=0](matmul(x,u),matmul(y,w))"},
    {"matmul-slice-right", "x:2x2 y:2x3", "matmul(x," SPL "(y))", SPL "(matmul(x,y))"},
    {"matmul-slice-left", "x:3x2 y:2x2", "matmul(split[axis=0,sizes=2x1,out=0](x),y)",
     "split[axis=0,sizes=2x1,out=0](matmul(x,y))"},
    /* ---- transpose */
    {"trans-involution", "x:2x3", "trans(trans(x))", "x"},
    {"trans-ewadd", "x:2x3 y:2x3", "trans(ewadd(x,y))", "ewadd(trans(x),trans(y))"},
    {"trans-ewmul", "x:2x3 y:2x3", "trans(ewmul(x,y))", "ewmul(trans(x),trans(y))"},
    {"trans-smul", "x:2x3 s:", "trans(smul(x,s))", "smul(trans(x),s)"},
    {"trans-imat", "", "trans(imat[shape=3x3]())", "imat[shape=3x3]()"},
    {"trans-ones", "", "trans(ones[shape=2x3]())", "ones[shape=3x2]()"},
    {"trans-concat", "x:2x1 y:2x2", "trans(concat[axis=1](x,y))", "concat[axis=0](trans(x),trans(y))"},
    {"trans-concat", "x:1x2x3 y:1x2x3", "trans(concat[axis=0](x,y))", "concat[axis=0](trans(x),trans(y))"},
    {"trans-slice", "x:2x3", "trans(" SPL "(x))", "split[axis=0,sizes=1x2,out=1](trans(x))"},
    /* ---- concat and split */
    {"concat-assoc", "x:1x2 y:2x2 z:1x2", "concat[axis=0](concat[axis=0](x,y),z)",
     "concat[axis=0](x,concat[axis=0](y,z))"},
    {"slice-concat-left", "x:2x1 y:2x2", "split[axis=1,sizes=1x2,out=0](concat[axis=1](x,y))", "x"},
    {"slice-concat-right", "x:2x1 y:2x2", SPL "(concat[axis=1](x,y))", "y"},
    {"concat-slices", "x:2x3", "concat[axis=1](split[axis=1,sizes=1x2,out=0](x)," SPL "(x))", "x"},
    {"slice-concat-across", "x:2x2 y:2x1", "split[axis=0,sizes=1x1,out=1](concat[axis=1](x,y))",
     "concat[axis=1](split[axis=0,sizes=1x1,out=1](x),split[axis=0,sizes=1x1,out=1](y))"},
    {"slice-within-left", "x:2x3 y:2x1", "split[axis=1,sizes=2x2,out=0](concat[axis=1](x,y))",
     "split[axis=1,sizes=2x1,out=0](x)"},
    {"slice-within-right", "x:2x1 y:2x3", "split[axis=1,sizes=2x2,out=1](concat[axis=1](x,y))",
     "split[axis=1,sizes=1x2,out=1](y)"},
    {"slice-trans", "x:1x3x2x3", "split[axis=1,sizes=1x2,out=1](trans(x))", "trans(split[axis=1,sizes=1x2,out=1](x))"},
    {"concat-trans", "x:1x1x2x3 y:1x2x2x3", "concat[axis=1](trans(x),trans(y))", "trans(concat[axis=1](x,y))"},
    {"concat-ewadd", "x:2x1 y:2x2 u:2x1 w:2x2", "ewadd(concat[axis=1](x,y),concat[axis=1](u,w))",
     "concat[axis=1](ewadd(x,u),ewadd(y,w))"},
    {"concat-ewmul", "x:2x1 y:2x2 u:2x1 w:2x2", "ewmul(concat[axis=1](x,y),concat[axis=1](u,w))",
     "concat[axis=1](ewmul(x,u),ewmul(y,w))"},
    {"concat-smul", "x:2x1 y:2x2 s:", "smul(concat[axis=1](x,y),s)", "concat[axis=1](smul(x,s),smul(y,s))"},
    {"concat-interchange", "x:1x1 y:1x2 z:2x1 w:2x2",
     "concat[axis=0](concat[axis=1](x,y),concat[axis=1](z,w))",
     "concat[axis=1](concat[axis=0](x,z),concat[axis=0](y,w))"},
    {"slice-ewadd", "x:2x3 y:2x3", SPL "(ewadd(x,y))", "ewadd(" SPL "(x)," SPL "(y))"},
    {"slice-ewmul", "x:2x3 y:2x3", SPL "(ewmul(x,y))", "ewmul(" SPL "(x)," SPL "(y))"},
    {"slice-smul", "x:2x3 s:", SPL "(smul(x,s))", "smul(" SPL "(x),s)"},
    /* ---- element-wise unary functions */
    UNARY("relu"),
    UNARY("sigmoid"),
    UNARY("tanh"),
    UNARY("gelu"),
    {"relu-idempotent", "x:2x3", "relu(relu(x))", "relu(x)"},
    /* ---- convolution */
    {"conv-linear-input", IMG, "conv[p=same](ewadd(x,y),w)", "ewadd(conv[p=same](x,w),conv[p=same](y,w))"},
    {"conv-linear-kernel", "x:1x2x3x3 w:2x2x3x3 v:2x2x3x3", "conv[p=same](x,ewadd(w,v))",
     "ewadd(conv[p=same](x,w),conv[p=same](x,v))"},
    {"conv-smul-input", "x:1x2x3x3 w:2x2x3x3 s:", "conv[p=same](smul(x,s),w)", "smul(conv[p=same](x,w),s)"},
    {"conv-smul-kernel", "x:1x2x4x4 w:2x2x3x3 s:", "conv[s=2,p=valid](x,smul(w,s))",
     "smul(conv[s=2,p=valid](x,w),s)"},
    {"conv-relu-fusion", "x:1x2x3x3 w:2x2x3x3", "relu(conv[p=same](x,w))", "conv[p=same,act=relu](x,w)"},
    {"conv-relu-fusion", "x:1x2x4x4 w:2x2x3x3", "relu(conv[s=2,p=valid](x,w))", "conv[s=2,p=valid,act=relu](x,w)"},
    {"conv-sigmoid-fusion", "x:1x2x3x3 w:2x2x3x3", "sigmoid(conv[p=same](x,w))", "conv[p=same,act=sigmoid](x,w)"},
    {"conv-tanh-fusion", "x:1x2x3x3 w:2x2x3x3", "tanh(conv[p=same](x,w))", "conv[p=same,act=tanh](x,w)"},
    {"conv-concat-kernel", "x:1x2x3x3 w:1x2x3x3 v:2x2x3x3", "conv[p=same,act=relu](x,concat[axis=0](w,v))",
     "concat[axis=1](conv[p=same,act=relu](x,w),conv[p=same,act=relu](x,v))"},
    {"conv-concat-channels", "x:1x1x3x3 y:1x1x3x3 w:2x1x3x3 v:2x1x3x3",
     "conv[p=same](concat[axis=1](x,y),concat[axis=1](w,v))", "ewadd(conv[p=same](x,w),conv[p=same](y,v))"},
    {"conv-concat-batch", IMG, "conv[p=same,act=relu](concat[axis=0](x,y),w)",
     "concat[axis=0](conv[p=same,act=relu](x,w),conv[p=same,act=relu](y,w))"},
    {"conv-slice-batch", "x:3x2x3x3 w:2x2x3x3",
     "split[axis=0,sizes=1x2,out=1](conv[p=same,act=relu](x,w))",
     "conv[p=same,act=relu](split[axis=0,sizes=1x2,out=1](x),w)"},
    {"conv-slice-batch", "x:3x2x4x4 w:2x2x3x3", "split[axis=0,sizes=2x1,out=0](conv[s=2,p=valid](x,w))",
     "conv[s=2,p=valid](split[axis=0,sizes=2x1,out=0](x),w)"},
    {"conv-slice-kernel", "x:1x2x3x3 w:3x2x3x3",
     "split[axis=1,sizes=1x2,out=1](conv[p=same,act=relu](x,w))",
     "conv[p=same,act=relu](x,split[axis=0,sizes=1x2,out=1](w))"},
    {"conv-identity", "x:1x2x3x3", "conv[p=same](x,iconv[shape=2x2x3x3]())", "x"},
    {"conv-identity", "x:1x2x3x3", "conv[p=same](x,iconv[shape=2x2x1x3]())", "x"},
    {"conv-identity-relu", "x:1x2x3x3", "conv[p=same,act=relu](x,iconv[shape=2x2x3x3]())", "relu(x)"},
    {"conv-enlarge", "x:1x2x3x3 w:2x2x1x1", "conv[p=same](x,enlarge[k=3](w))", "conv[p=same](x,w)"},
    {"conv-enlarge", "x:1x2x4x4 w:2x2x1x3", "conv[s=2,p=same,act=relu](x,enlarge[k=3](w))",
     "conv[s=2,p=same,act=relu](x,w)"},
    {"conv-trans", "x:1x1x4x3 w:1x1x3x2", "conv[s=2x1,p=valid](trans(x),trans(w))",
     "trans(conv[s=1x2,p=valid](x,w))"},
    {"conv-trans", "x:1x2x3x3 w:2x2x3x1", "conv[p=same,act=relu](trans(x),trans(w))",
     "trans(conv[p=same,act=relu](x,w))"},
    {"enlarge-ewadd", "x:2x2x1x1 y:2x2x1x1", "enlarge[k=3](ewadd(x,y))", "ewadd(enlarge[k=3](x),enlarge[k=3](y))"},
    {"enlarge-ewmul", "x:2x2x1x1 y:2x2x1x1", "ewmul(enlarge[k=3](x),enlarge[k=3](y))", "enlarge[k=3](ewmul(x,y))"},
    {"enlarge-smul", "x:2x2x1x1 s:", "enlarge[k=3](smul(x,s))", "smul(enlarge[k=3](x),s)"},
    {"enlarge-concat", "x:1x2x1x1 y:1x2x1x1", "enlarge[k=3](concat[axis=0](x,y))",
     "concat[axis=0](enlarge[k=3](x),enlarge[k=3](y))"},
    {"enlarge-concat", "x:2x1x1x3 y:2x1x1x3", "enlarge[k=3](concat[axis=1](x,y))",
     "concat[axis=1](enlarge[k=3](x),enlarge[k=3](y))"},
    {"iconv-trans", "", "trans(iconv[shape=2x2x3x1]())", "iconv[shape=2x2x1x3]()"},
    /* ---- pooling */
    {"conv1x1-avgpool", "x:1x2x3x3 w:3x2x1x1", "conv[p=same](avgpool[k=3,p=same](x),w)",
     "avgpool[k=3,p=same](conv[p=same](x,w))"},
    {"conv1x1-avgpool", "x:1x2x4x4 w:2x1x1x1", "conv[p=valid,g=2](avgpool[k=3,s=2,p=valid](x),w)",
     "avgpool[k=3,s=2,p=valid](conv[p=valid,g=2](x,w))"},
    {"conv1x1-mean", "x:1x2x3x2 w:3x2x1x1", "mean[axis=3](conv[p=same](x,w))", "conv[p=same](mean[axis=3](x),w)"},
    {"conv1x1-mean", "x:1x2x3x2 w:3x2x1x1", "mean[axis=2](conv[p=same](x,w))", "conv[p=same](mean[axis=2](x),w)"},
    {"conv1x1-enlarge", "x:2x2x1x1 w:3x2x1x1", "conv[p=same](enlarge[k=3](x),w)", "enlarge[k=3](conv[p=same](x,w))"},
    {"conv1x1-enlarge", "x:2x2x1x3 w:2x2x1x1", "conv[p=same,act=relu](enlarge[k=3](x),w)",
     "enlarge[k=3](conv[p=same,act=relu](x,w))"},
    {"enlarge-relu", "x:2x2x1x1", "relu(enlarge[k=3](x))", "enlarge[k=3](relu(x))"},
    {"enlarge-slice", "x:3x2x1x1", "enlarge[k=3](split[axis=0,sizes=1x2,out=1](x))",
     "split[axis=0,sizes=1x2,out=1](enlarge[k=3](x))"},
    {"enlarge-slice", "x:2x3x1x1", "enlarge[k=3](" SPL "(x))", SPL "(enlarge[k=3](x))"},
    {"avgpool-as-conv", "x:1x2x3x3", "avgpool[k=3,p=same](x)", "conv[p=same,g=2](x,pool[shape=2x1x3x3]())"},
    {"avgpool-as-conv", "x:1x2x4x4", "avgpool[k=3,s=2,p=valid](x)", "conv[s=2,p=valid,g=2](x,pool[shape=2x1x3x3]())"},
    {"avgpool-concat", "x:1x1x3x3 y:1x2x3x3", "avgpool[k=3,p=same](concat[axis=1](x,y))",
     "concat[axis=1](avgpool[k=3,p=same](x),avgpool[k=3,p=same](y))"},
    {"maxpool-concat", "x:1x1x3x3 y:1x1x3x3", "maxpool[k=3,p=same](concat[axis=0](x,y))",
     "concat[axis=0](maxpool[k=3,p=same](x),maxpool[k=3,p=same](y))"},
    {"avgpool-slice", "x:1x3x3x3", "avgpool[k=3,p=same](split[axis=1,sizes=1x2,out=1](x))",
     "split[axis=1,sizes=1x2,out=1](avgpool[k=3,p=same](x))"},
    {"maxpool-slice", "x:3x1x3x3", "maxpool[k=3,p=same](split[axis=0,sizes=2x1,out=0](x))",
     "split[axis=0,sizes=2x1,out=0](maxpool[k=3,p=same](x))"},
    {"maxpool-relu", "x:1x1x3x3", "relu(maxpool[k=3,s=1,p=same](x))", "maxpool[k=3,s=1,p=same](relu(x))"},
    {"avgpool-trans", "x:1x1x3x3", "avgpool[k=3x1,p=same](trans(x))", "trans(avgpool[k=1x3,p=same](x))"},
    {"avgpool-trans", "x:1x1x4x3", "avgpool[k=3,s=2x1,p=valid](trans(x))",
     "trans(avgpool[k=3,s=1x2,p=valid](x))"},
    {"maxpool-trans", "x:1x1x3x3", "maxpool[k=3x1,p=same](trans(x))", "trans(maxpool[k=1x3,p=same](x))"},
    {"pool-trans", "", "trans(pool[shape=2x1x3x1]())", "pool[shape=2x1x1x3]()"},
    /* ---- softmax, mean, layer-norm */
    {"softmax-concat", "x:1x3 y:1x3", "softmax[axis=1](concat[axis=0](x,y))",
     "concat[axis=0](softmax[axis=1](x),softmax[axis=1](y))"},
    {"softmax-slice", "x:3x2", "softmax[axis=1](split[axis=0,sizes=1x2,out=1](x))",
     "split[axis=0,sizes=1x2,out=1](softmax[axis=1](x))"},
    {"softmax-trans", "x:2x3", "softmax[axis=1](trans(x))", "trans(softmax[axis=0](x))"},
    {"mean-ewadd", "x:2x3 y:2x3", "mean[axis=1](ewadd(x,y))", "ewadd(mean[axis=1](x),mean[axis=1](y))"},
    {"mean-smul", "x:2x3 s:", "mean[axis=1](smul(x,s))", "smul(mean[axis=1](x),s)"},
    {"mean-matmul-right", "x:2x2 y:2x3", "mean[axis=1](matmul(x,y))", "matmul(x,mean[axis=1](y))"},
    {"mean-matmul-left", "x:3x2 y:2x2", "mean[axis=0](matmul(x,y))", "matmul(mean[axis=0](x),y)"},
    {"mean-concat", "x:1x3 y:2x3", "mean[axis=1](concat[axis=0](x,y))",
     "concat[axis=0](mean[axis=1](x),mean[axis=1](y))"},
    {"mean-slice", "x:3x2", "mean[axis=1](split[axis=0,sizes=1x2,out=1](x))",
     "split[axis=0,sizes=1x2,out=1](mean[axis=1](x))"},
    {"mean-slice", "x:2x3x2", "mean[axis=2](" SPL "(x))", SPL "(mean[axis=2](x))"},
    {"mean-idempotent", "x:2x3", "mean[axis=1](mean[axis=1](x))", "mean[axis=1](x)"},
    {"mean-trans", "x:2x3", "mean[axis=1](trans(x))", "trans(mean[axis=0](x))"},
    {"layernorm-concat", "x:1x3 y:1x3 g:3 c:3", "layernorm[axis=1](concat[axis=0](x,y),g,c)",
     "concat[axis=0](layernorm[axis=1](x,g,c),layernorm[axis=1](y,g,c))"},
    {"layernorm-concat-copies", "x:2x3 g:3", "layernorm[axis=1](concat[axis=1](x,x),concat[axis=0](g,g))",
     "concat[axis=1](layernorm[axis=1](x,g),layernorm[axis=1](x,g))"},
    {"layernorm-concat-copies", "x:2x2x3 g:2x3", "layernorm[axis=1](concat[axis=2](x,x),concat[axis=1](g,g))",
     "concat[axis=2](layernorm[axis=1](x,g),layernorm[axis=1](x,g))"},
    {"layernorm-scale-ewadd", "x:2x3 g:3 h:3 c:3", "layernorm[axis=1](x,ewadd(g,h),c)",
     "ewadd(layernorm[axis=1](x,g,c),layernorm[axis=1](x,h))"},
    {"layernorm-scale-ewadd", "x:2x2x2 g:2x2 h:2x2", "layernorm[axis=1](x,ewadd(g,h))",
     "ewadd(layernorm[axis=1](x,g),layernorm[axis=1](x,h))"},
    {"layernorm-scale-smul", "x:2x3 g:3 s:", "layernorm[axis=1](x,smul(g,s))", "smul(layernorm[axis=1](x,g),s)"},
    {"layernorm-slice", "x:3x2 g:2 c:2", "layernorm[axis=1](split[axis=0,sizes=1x2,out=1](x),g,c)",
     "split[axis=0,sizes=1x2,out=1](layernorm[axis=1](x,g,c))"},
};

int xf_verify_axiom_instance_count(void)
{
    return (int)(sizeof instances / sizeof instances[0]);
}

const xf_axiom_instance *xf_verify_axiom_instance(int i)
{
    if (i < 0 || i >= xf_verify_axiom_instance_count()) return NULL;
    return &instances[i];
}
