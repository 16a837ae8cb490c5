/*
 * axioms.c — the operator properties the axiomatic prover may use, one row
 * each: a stable name, a one-line description for auditors (docs/verify.md
 * lists the same table) and the quantified formula in SMT-LIB 2 over the
 * uninterpreted tensor sort T and the operator functions declared in
 * axioms_load.c. Axes are relative to the last dimension (negative), as
 * rules store them; concat carries the sizes of its two parts along the
 * axis and slice its offset, length and the input's size, so split/concat
 * laws need no shape reasoning. Shapes are otherwise ignored (the generator
 * only builds well-typed graphs), except through the predicates hw1 ("the
 * last two axes have size 1") and scalar ("rank 0"), which the encoder
 * states from the rule's shapes and the 1x1-convolution and scalar axioms
 * take as their guard. lnorm is layer-norm with unit scale and no bias
 * (what a layer-norm with a ones scale encodes as). Patterns
 * (:pattern) keep E-matching on the left-hand side so instantiation stays
 * finite; FA2 axioms also match their right-hand side where a rule's other
 * side is written that way round.
 */
#include <string.h>

#include "verify/verify_internal.h"

#define FA(vars, body, pat) "(forall (" vars ") (! " body " :pattern (" pat ")))"
/* Two alternative triggers: the equation is used from either side. */
#define FA2(vars, body, pat1, pat2) \
    "(forall (" vars ") (! " body " :pattern (" pat1 ") :pattern (" pat2 ")))"
#define T2 "(x T) (y T)"
#define T3 "(x T) (y T) (z T)"
#define CAT "(a Int) (n Int) (m Int)"
#define SL "(a Int) (o Int) (l Int) (t Int)"
#define CV "(sh Int) (sw Int) (p Int) (g Int)"
/* Last-two-axes swap of a negative axis (what transpose does to it). */
#define SWAPAX(ax) "(ite (= " ax " -1) -2 (ite (= " ax " -2) -1 " ax "))"
/* The swap of axes k and k+1 applied to a negative axis (what tswap k does to it). */
#define TSWAPAX(ax) "(ite (= " ax " k) (+ k 1) (ite (= " ax " (+ k 1)) k " ax "))"

/* An element-wise unary function commutes with every data movement. */
#define UNARY(f, what)                                                                         \
    {f "-trans", what " commutes with transpose",                                              \
     FA2("(x T)", "(= (" f " (trans x)) (trans (" f " x)))", "(" f " (trans x))",              \
         "(trans (" f " x))")},                                                                 \
    {f "-concat", what " of a concat is the concat of " what "s",                              \
     FA(CAT " " T2, "(= (" f " (concat a n m x y)) (concat a n m (" f " x) (" f " y)))",       \
        "(" f " (concat a n m x y))")},                                                        \
    {f "-slice", what " commutes with a slice (split output)",                                 \
     FA2(SL " (x T)", "(= (" f " (slice a o l t x)) (slice a o l t (" f " x)))",               \
         "(" f " (slice a o l t x))", "(slice a o l t (" f " x))")},                           \
    {f "-tswap", what " commutes with a swap of two axes",                                     \
     FA("(k Int) (x T)", "(= (" f " (tswap k x)) (tswap k (" f " x)))", "(" f " (tswap k x))")}

/* An element-wise unary function commutes with a reshape, and keeps its
 * operand's shape (so a reshape of its result has the reshape's shape id). */
#define UNARY_VIEW(f, what)                                                                    \
    {f "-view", what " commutes with a reshape",                                              \
     FA("(s Int) (x T)", "(= (" f " (view s x)) (view s (" f " x)))", "(" f " (view s x))")}, \
    {f "-shape", what " keeps its operand's shape",                                           \
     FA("(x T)", "(= (shp (" f " x)) (shp x))", "(" f " x)")}

static const xf_axiom_info axioms[] = {
    /* ---- element-wise arithmetic */
    {"ewadd-comm", "element-wise addition is commutative",
     FA(T2, "(= (ewadd x y) (ewadd y x))", "(ewadd x y)")},
    {"ewadd-assoc", "element-wise addition is associative",
     FA(T3, "(= (ewadd x (ewadd y z)) (ewadd (ewadd x y) z))", "(ewadd x (ewadd y z))")},
    {"ewmul-comm", "element-wise multiplication is commutative",
     FA(T2, "(= (ewmul x y) (ewmul y x))", "(ewmul x y)")},
    {"ewmul-assoc", "element-wise multiplication is associative",
     FA(T3, "(= (ewmul x (ewmul y z)) (ewmul (ewmul x y) z))", "(ewmul x (ewmul y z))")},
    {"ewmul-ewadd-distrib", "element-wise multiplication distributes over addition",
     FA(T3, "(= (ewmul (ewadd x y) z) (ewadd (ewmul x z) (ewmul y z)))", "(ewmul (ewadd x y) z)")},
    {"ewmul-ones", "multiplying by the ones constant is the identity",
     FA("(x T)", "(= (ewmul x ones) x)", "(ewmul x ones)")},
    {"smul-ewadd-distrib", "scalar multiplication distributes over element-wise addition",
     FA("(x T) (y T) (s T)", "(= (smul (ewadd x y) s) (ewadd (smul x s) (smul y s)))",
        "(smul (ewadd x y) s)")},
    {"smul-scalar-distrib", "a tensor times a sum of scalars is the sum of the products",
     FA("(x T) (s T) (r T)", "(= (smul x (ewadd s r)) (ewadd (smul x s) (smul x r)))",
        "(smul x (ewadd s r))")},
    {"smul-as-ewmul", "scalar multiplication is element-wise multiplication by the broadcast scalar",
     FA("(x T) (s T)", "(= (smul x s) (ewmul x s))", "(smul x s)")},
    {"smul-smul", "two scalar multiplications are one by the product of the scalars",
     FA("(x T) (s T) (r T)", "(= (smul (smul x s) r) (smul x (ewmul s r)))", "(smul (smul x s) r)")},
    {"smul-ewmul", "scalar multiplication commutes into one factor of an element-wise product",
     FA("(x T) (y T) (s T)", "(= (smul (ewmul x y) s) (ewmul (smul x s) y))", "(smul (ewmul x y) s)")},
    {"matmul-assoc", "matrix multiplication is associative",
     FA(T3, "(= (matmul x (matmul y z)) (matmul (matmul x y) z))", "(matmul x (matmul y z))")},
    {"matmul-linear-left", "matmul is linear in its first argument",
     FA(T3, "(= (matmul (ewadd x y) z) (ewadd (matmul x z) (matmul y z)))", "(matmul (ewadd x y) z)")},
    {"matmul-linear-right", "matmul is linear in its second argument",
     FA(T3, "(= (matmul x (ewadd y z)) (ewadd (matmul x y) (matmul x z)))", "(matmul x (ewadd y z))")},
    {"matmul-smul-left", "a scalar factor of matmul's first argument moves out",
     FA("(x T) (y T) (s T)", "(= (matmul (smul x s) y) (smul (matmul x y) s))", "(matmul (smul x s) y)")},
    {"matmul-smul-right", "a scalar factor of matmul's second argument moves out",
     FA("(x T) (y T) (s T)", "(= (matmul x (smul y s)) (smul (matmul x y) s))", "(matmul x (smul y s))")},
    {"matmul-identity-right", "multiplying by the identity matrix on the right is the identity",
     FA("(x T)", "(= (matmul x imat) x)", "(matmul x imat)")},
    {"matmul-identity-left", "multiplying by the identity matrix on the left is the identity",
     FA("(x T)", "(= (matmul imat x) x)", "(matmul imat x)")},
    {"matmul-trans", "the transpose of a product is the product of the transposes, swapped",
     FA(T2, "(= (trans (matmul x y)) (matmul (trans y) (trans x)))", "(trans (matmul x y))")},
    {"matmul-concat-right", "matmul with a column-concat is the column-concat of matmuls",
     FA("(n Int) (m Int) " T3,
        "(= (matmul x (concat -1 n m y z)) (concat -1 n m (matmul x y) (matmul x z)))",
        "(matmul x (concat -1 n m y z))")},
    {"matmul-concat-left", "matmul of a row-concat is the row-concat of matmuls",
     FA("(n Int) (m Int) " T3,
        "(= (matmul (concat -2 n m x y) z) (concat -2 n m (matmul x z) (matmul y z)))",
        "(matmul (concat -2 n m x y) z)")},
    {"matmul-concat-inner", "matmul of concats along the contracted axis is a sum of matmuls",
     FA("(n Int) (m Int) (x T) (y T) (u T) (w T)",
        "(= (matmul (concat -1 n m x y) (concat -2 n m u w)) (ewadd (matmul x u) (matmul y w)))",
        "(matmul (concat -1 n m x y) (concat -2 n m u w))")},
    {"matmul-concat-batch", "batched matmul of concats along a batch axis is the concat of matmuls",
     FA(CAT " (x T) (y T) (u T) (w T)",
        "(=> (<= a -3) (= (matmul (concat a n m x y) (concat a n m u w)) "
        "(concat a n m (matmul x u) (matmul y w))))",
        "(matmul (concat a n m x y) (concat a n m u w))")},
    {"matmul-slice-right", "a column slice of a product is the product with the column slice",
     FA("(o Int) (l Int) (t Int) " T2,
        "(= (matmul x (slice -1 o l t y)) (slice -1 o l t (matmul x y)))", "(matmul x (slice -1 o l t y))")},
    {"matmul-slice-left", "a row slice of a product is the product of the row slice",
     FA("(o Int) (l Int) (t Int) " T2,
        "(= (matmul (slice -2 o l t x) y) (slice -2 o l t (matmul x y)))", "(matmul (slice -2 o l t x) y)")},
    {"matmul-slice-batch", "a batch slice of a batched matmul is the matmul of both operands' batch "
                           "slices",
     FA2(SL " " T2,
         "(=> (<= a -3) (= (slice a o l t (matmul x y)) (matmul (slice a o l t x) (slice a o l t y))))",
         "(slice a o l t (matmul x y))", "(matmul (slice a o l t x) (slice a o l t y))")},
    /* ---- transpose */
    {"trans-involution", "transposing twice is the identity",
     FA("(x T)", "(= (trans (trans x)) x)", "(trans (trans x))")},
    {"trans-ewadd", "transpose distributes over element-wise addition",
     FA2(T2, "(= (trans (ewadd x y)) (ewadd (trans x) (trans y)))", "(trans (ewadd x y))",
         "(ewadd (trans x) (trans y))")},
    {"trans-ewmul", "transpose distributes over element-wise multiplication",
     FA2(T2, "(= (trans (ewmul x y)) (ewmul (trans x) (trans y)))", "(trans (ewmul x y))",
         "(ewmul (trans x) (trans y))")},
    {"trans-smul", "transpose commutes with scalar multiplication",
     FA("(x T) (s T)", "(= (trans (smul x s)) (smul (trans x) s))", "(trans (smul x s))")},
    {"trans-imat", "the identity matrix is symmetric",
     "(= (trans imat) imat)"},
    {"trans-ones", "the ones constant is symmetric (all ones of the transposed shape)",
     "(= (trans ones) ones)"},
    {"trans-concat", "transpose of a concat is the concat of transposes along the swapped axis",
     FA(CAT " " T2, "(= (trans (concat a n m x y)) (concat " SWAPAX("a") " n m (trans x) (trans y)))",
        "(trans (concat a n m x y))")},
    {"trans-slice", "transpose of a slice is the slice of the transpose along the swapped axis",
     FA(SL " (x T)", "(= (trans (slice a o l t x)) (slice " SWAPAX("a") " o l t (trans x)))",
        "(trans (slice a o l t x))")},
    {"slice-trans", "a batch or channel slice of a transpose is the transpose of the slice",
     FA(SL " (x T)", "(=> (<= a -3) (= (slice a o l t (trans x)) (trans (slice a o l t x))))",
        "(slice a o l t (trans x))")},
    {"concat-trans", "a batch or channel concat of transposes is the transpose of the concat",
     FA(CAT " " T2, "(=> (<= a -3) (= (concat a n m (trans x) (trans y)) (trans (concat a n m x y))))",
        "(concat a n m (trans x) (trans y))")},
    /* ---- a swap of two axes before the last two (tswap k, k <= -3): the
     * head transpose [B,S,h,d] -> [B,h,S,d] of attention */
    {"tswap-involution", "swapping the same two axes twice is the identity",
     FA("(k Int) (x T)", "(= (tswap k (tswap k x)) x)", "(tswap k (tswap k x))")},
    {"tswap-slice", "a swap of two axes of a slice is the slice of the swap along the moved axis",
     FA("(k Int) " SL " (x T)",
        "(= (tswap k (slice a o l t x)) (slice " TSWAPAX("a") " o l t (tswap k x)))",
        "(tswap k (slice a o l t x))")},
    {"slice-tswap", "a slice of a swap of two axes is the swap of the slice along the moved axis",
     FA("(k Int) " SL " (x T)",
        "(= (slice a o l t (tswap k x)) (tswap k (slice " TSWAPAX("a") " o l t x)))",
        "(slice a o l t (tswap k x))")},
    {"tswap-smul", "a swap of two axes commutes with scalar multiplication",
     FA("(k Int) (x T) (s T)", "(= (tswap k (smul x s)) (smul (tswap k x) s))",
        "(tswap k (smul x s))")},
    {"tswap-concat", "a swap of two axes of a concat is the concat of the swaps along the moved axis",
     FA("(k Int) " CAT " " T2,
        "(= (tswap k (concat a n m x y)) (concat " TSWAPAX("a") " n m (tswap k x) (tswap k y)))",
        "(tswap k (concat a n m x y))")},
    {"concat-tswap", "a concat of swaps of two axes is the swap of the concat along the moved axis",
     FA("(k Int) " CAT " " T2,
        "(= (concat a n m (tswap k x) (tswap k y)) (tswap k (concat " TSWAPAX("a") " n m x y)))",
        "(concat a n m (tswap k x) (tswap k y))")},
    {"mean-tswap", "a mean of a swap of two axes is the swap of the mean along the moved axis",
     FA("(k Int) (b Int) (x T)", "(= (mean b (tswap k x)) (tswap k (mean " TSWAPAX("b") " x)))",
        "(mean b (tswap k x))")},
    {"softmax-tswap", "softmax along the last axis commutes with a swap of two axes before it",
     FA("(k Int) (x T)", "(= (softmax -1 (tswap k x)) (tswap k (softmax -1 x)))",
        "(softmax -1 (tswap k x))")},
    {"tswap-ewadd", "a swap of two axes distributes over element-wise addition",
     FA2("(k Int) " T2, "(= (tswap k (ewadd x y)) (ewadd (tswap k x) (tswap k y)))",
         "(tswap k (ewadd x y))", "(ewadd (tswap k x) (tswap k y))")},
    {"tswap-ewmul", "a swap of two axes distributes over element-wise multiplication",
     FA2("(k Int) " T2, "(= (tswap k (ewmul x y)) (ewmul (tswap k x) (tswap k y)))",
         "(tswap k (ewmul x y))", "(ewmul (tswap k x) (tswap k y))")},
    {"layernorm-tswap", "layer-norm commutes with a swap of two axes before the normalised ones",
     FA("(k Int) (b Int) (x T) (g T) (c T)",
        "(=> (< (+ k 1) b) (= (layernorm b (tswap k x) g c) (tswap k (layernorm b x g c))))",
        "(layernorm b (tswap k x) g c)")},
    {"lnorm-tswap", "the unit-scale layer-norm commutes with a swap of two axes before the "
                    "normalised ones",
     FA("(k Int) (b Int) (x T)", "(=> (< (+ k 1) b) (= (lnorm b (tswap k x)) (tswap k (lnorm b x))))",
        "(lnorm b (tswap k x))")},
    /* ---- concat and split */
    {"concat-assoc", "concat along one axis is associative",
     FA("(a Int) (n Int) (m Int) (k Int) (nm Int) " T3,
        "(=> (= nm (+ n m)) "
        "(= (concat a nm k (concat a n m x y) z) (concat a n (+ m k) x (concat a m k y z))))",
        "(concat a nm k (concat a n m x y) z)")},
    {"concat-assoc-right", "a concat whose second part is a concat along the same axis nests the other way round",
     FA("(a Int) (n Int) (m Int) (k Int) (mk Int) " T3,
        "(=> (= mk (+ m k)) "
        "(= (concat a n mk x (concat a m k y z)) (concat a (+ n m) k (concat a n m x y) z)))",
        "(concat a n mk x (concat a m k y z))")},
    {"slice-concat-left", "splitting a concat at its boundary gives back the first part",
     FA(CAT " (t Int) " T2, "(=> (= t (+ n m)) (= (slice a 0 n t (concat a n m x y)) x))",
        "(slice a 0 n t (concat a n m x y))")},
    {"slice-concat-right", "splitting a concat at its boundary gives back the second part",
     FA(CAT " (t Int) " T2, "(=> (= t (+ n m)) (= (slice a n m t (concat a n m x y)) y))",
        "(slice a n m t (concat a n m x y))")},
    {"concat-slices", "concatenating the two parts of a split gives back the input",
     FA(CAT " (t Int) (x T)", "(=> (= t (+ n m)) (= (concat a n m (slice a 0 n t x) (slice a n m t x)) x))",
        "(concat a n m (slice a 0 n t x) (slice a n m t x))")},
    {"concat-ones", "a concat of two ones constants is the ones constant (all ones of the joined shape)",
     FA(CAT, "(= (concat a n m ones ones) ones)", "(concat a n m ones ones)")},
    {"slice-ones", "a slice of the ones constant is the ones constant (all ones of the slice's shape)",
     FA(SL, "(= (slice a o l t ones) ones)", "(slice a o l t ones)")},
    {"slice-concat-across", "a slice along one axis of a concat along another is the concat of the slices",
     FA2("(a Int) (o Int) (l Int) (t Int) (b Int) (n Int) (m Int) " T2,
         "(=> (not (= a b)) (= (slice a o l t (concat b n m x y)) "
         "(concat b n m (slice a o l t x) (slice a o l t y))))",
         "(slice a o l t (concat b n m x y))", "(concat b n m (slice a o l t x) (slice a o l t y))")},
    {"slice-within-left", "a slice of a concat that lies inside the first part is a slice of it",
     FA(CAT " (o Int) (l Int) (t Int) " T2,
        "(=> (and (= t (+ n m)) (<= (+ o l) n)) (= (slice a o l t (concat a n m x y)) (slice a o l n x)))",
        "(slice a o l t (concat a n m x y))")},
    {"slice-within-right", "a slice of a concat that lies inside the second part is a slice of it",
     FA(CAT " (o Int) (l Int) (t Int) " T2,
        "(=> (and (= t (+ n m)) (>= o n)) (= (slice a o l t (concat a n m x y)) (slice a (- o n) l m y)))",
        "(slice a o l t (concat a n m x y))")},
    {"slice-across-boundary", "a slice of a concat that straddles the boundary is the concat of the slices of "
                              "both parts",
     FA(CAT " (o Int) (l Int) (t Int) " T2,
        "(=> (and (= t (+ n m)) (< o n) (< n (+ o l))) (= (slice a o l t (concat a n m x y)) "
        "(concat a (- n o) (- (+ o l) n) (slice a o (- n o) n x) (slice a 0 (- (+ o l) n) m y))))",
        "(slice a o l t (concat a n m x y))")},
    {"slice-slice", "slices along two different axes commute",
     FA(SL " (b Int) (p Int) (q Int) (u Int) (x T)",
        "(=> (not (= a b)) (= (slice a o l t (slice b p q u x)) (slice b p q u (slice a o l t x))))",
        "(slice a o l t (slice b p q u x))")},
    {"slice-whole", "a slice that takes the whole axis is its input",
     FA("(a Int) (t Int) (x T)", "(= (slice a 0 t t x) x)", "(slice a 0 t t x)")},
    {"concat-ewadd", "the sum of two concats with equal parts is the concat of the sums",
     FA(CAT " (x T) (y T) (u T) (w T)",
        "(= (ewadd (concat a n m x y) (concat a n m u w)) (concat a n m (ewadd x u) (ewadd y w)))",
        "(ewadd (concat a n m x y) (concat a n m u w))")},
    {"concat-ewmul", "the product of two concats with equal parts is the concat of the products",
     FA(CAT " (x T) (y T) (u T) (w T)",
        "(= (ewmul (concat a n m x y) (concat a n m u w)) (concat a n m (ewmul x u) (ewmul y w)))",
        "(ewmul (concat a n m x y) (concat a n m u w))")},
    {"concat-smul", "scalar multiplication of a concat is the concat of the products",
     FA(CAT " (x T) (y T) (s T)", "(= (smul (concat a n m x y) s) (concat a n m (smul x s) (smul y s)))",
        "(smul (concat a n m x y) s)")},
    {"concat-interchange", "concats along two different axes can be nested either way round",
     FA("(a Int) (n Int) (m Int) (b Int) (k Int) (l Int) (x T) (y T) (z T) (w T)",
        "(=> (not (= a b)) (= (concat a n m (concat b k l x y) (concat b k l z w)) "
        "(concat b k l (concat a n m x z) (concat a n m y w))))",
        "(concat a n m (concat b k l x y) (concat b k l z w))")},
    {"slice-ewadd", "a slice of a sum is the sum of the slices",
     FA(SL " " T2, "(= (slice a o l t (ewadd x y)) (ewadd (slice a o l t x) (slice a o l t y)))",
        "(slice a o l t (ewadd x y))")},
    {"slice-ewmul", "a slice of a product is the product of the slices",
     FA(SL " " T2, "(= (slice a o l t (ewmul x y)) (ewmul (slice a o l t x) (slice a o l t y)))",
        "(slice a o l t (ewmul x y))")},
    {"slice-smul", "a slice of a scalar product is the scalar product of the slice",
     FA(SL " (x T) (s T)", "(= (slice a o l t (smul x s)) (smul (slice a o l t x) s))",
        "(slice a o l t (smul x s))")},
    /* ---- element-wise unary functions */
    UNARY("relu", "relu"),
    UNARY("sigmoid", "sigmoid"),
    UNARY("tanh", "tanh"),
    UNARY("gelu", "gelu"),
    UNARY("erf", "erf"),
    {"relu-idempotent", "relu applied twice is relu",
     FA("(x T)", "(= (relu (relu x)) (relu x))", "(relu (relu x))")},
    /* ---- convolution (conv sh sw pad act group x w; pad 0 same, 1 valid; group -1 depthwise) */
    {"conv-linear-input", "a convolution without activation is linear in its input",
     FA(CV " " T3, "(= (conv sh sw p 0 g (ewadd x y) z) (ewadd (conv sh sw p 0 g x z) (conv sh sw p 0 g y z)))",
        "(conv sh sw p 0 g (ewadd x y) z)")},
    {"conv-linear-kernel", "a convolution without activation is linear in its kernel",
     FA(CV " " T3, "(= (conv sh sw p 0 g x (ewadd y z)) (ewadd (conv sh sw p 0 g x y) (conv sh sw p 0 g x z)))",
        "(conv sh sw p 0 g x (ewadd y z))")},
    {"conv-smul-input", "a scalar factor of a convolution's input moves out (no activation)",
     FA(CV " (x T) (w T) (s T)", "(= (conv sh sw p 0 g (smul x s) w) (smul (conv sh sw p 0 g x w) s))",
        "(conv sh sw p 0 g (smul x s) w)")},
    {"conv-smul-kernel", "a scalar factor of a convolution's kernel moves out (no activation)",
     FA(CV " (x T) (w T) (s T)", "(= (conv sh sw p 0 g x (smul w s)) (smul (conv sh sw p 0 g x w) s))",
        "(conv sh sw p 0 g x (smul w s))")},
    {"conv-relu-fusion", "relu after a convolution is the convolution with fused relu",
     FA2(CV " (x T) (w T)", "(= (relu (conv sh sw p 0 g x w)) (conv sh sw p 1 g x w))",
         "(relu (conv sh sw p 0 g x w))", "(conv sh sw p 1 g x w)")},
    {"conv-sigmoid-fusion", "sigmoid after a convolution is the convolution with fused sigmoid",
     FA2(CV " (x T) (w T)", "(= (sigmoid (conv sh sw p 0 g x w)) (conv sh sw p 2 g x w))",
         "(sigmoid (conv sh sw p 0 g x w))", "(conv sh sw p 2 g x w)")},
    {"conv-tanh-fusion", "tanh after a convolution is the convolution with fused tanh",
     FA2(CV " (x T) (w T)", "(= (tanh (conv sh sw p 0 g x w)) (conv sh sw p 3 g x w))",
         "(tanh (conv sh sw p 0 g x w))", "(conv sh sw p 3 g x w)")},
    {"conv-concat-kernel", "a convolution with kernels concatenated on output channels is the "
                           "channel concat of the convolutions",
     FA("(sh Int) (sw Int) (p Int) (c Int) (n Int) (m Int) (x T) (w T) (v T)",
        "(= (conv sh sw p c 1 x (concat -4 n m w v)) (concat -3 n m (conv sh sw p c 1 x w) (conv sh sw p c 1 x v)))",
        "(conv sh sw p c 1 x (concat -4 n m w v))")},
    {"conv-concat-channels", "a convolution over concatenated input channels is the sum of the "
                             "convolutions of the parts (no activation)",
     FA("(sh Int) (sw Int) (p Int) (n Int) (m Int) (x T) (y T) (w T) (v T)",
        "(= (conv sh sw p 0 1 (concat -3 n m x y) (concat -3 n m w v)) (ewadd (conv sh sw p 0 1 x w) (conv sh sw p 0 1 y v)))",
        "(conv sh sw p 0 1 (concat -3 n m x y) (concat -3 n m w v))")},
    {"conv-concat-kernel-channels", "a convolution with a kernel concatenated on input channels is the sum of "
                                    "the convolutions of the input's channel slices (no activation, one group)",
     FA("(sh Int) (sw Int) (p Int) (n Int) (m Int) (x T) (w T) (v T)",
        "(= (conv sh sw p 0 1 x (concat -3 n m w v)) (ewadd (conv sh sw p 0 1 (slice -3 0 n (+ n m) x) w) "
        "(conv sh sw p 0 1 (slice -3 n m (+ n m) x) v)))",
        "(conv sh sw p 0 1 x (concat -3 n m w v))")},
    {"conv-concat-input-channels", "a convolution of an input concatenated on channels is the sum of the "
                                   "convolutions with the kernel's channel slices (no activation, one group)",
     FA("(sh Int) (sw Int) (p Int) (n Int) (m Int) (x T) (y T) (w T)",
        "(= (conv sh sw p 0 1 (concat -3 n m x y) w) (ewadd (conv sh sw p 0 1 x (slice -3 0 n (+ n m) w)) "
        "(conv sh sw p 0 1 y (slice -3 n m (+ n m) w))))",
        "(conv sh sw p 0 1 (concat -3 n m x y) w)")},
    {"conv-concat-batch", "a convolution of a batch concat is the batch concat of the convolutions",
     FA(CV " (c Int) (n Int) (m Int) (x T) (y T) (w T)",
        "(= (conv sh sw p c g (concat -4 n m x y) w) (concat -4 n m (conv sh sw p c g x w) (conv sh sw p c g y w)))",
        "(conv sh sw p c g (concat -4 n m x y) w)")},
    {"conv-slice-batch", "a batch slice of a convolution is the convolution of the batch slice",
     FA2(CV " (c Int) (o Int) (l Int) (t Int) (x T) (w T)",
         "(= (slice -4 o l t (conv sh sw p c g x w)) (conv sh sw p c g (slice -4 o l t x) w))",
         "(slice -4 o l t (conv sh sw p c g x w))", "(conv sh sw p c g (slice -4 o l t x) w)")},
    {"conv1x1-slice-spatial", "a slice along a spatial axis of a stride-1 convolution with a 1x1 "
                              "kernel is the convolution of the slice",
     FA2(SL " (p Int) (c Int) (g Int) (x T) (w T)",
         "(=> (and (hw1 w) (or (= a -1) (= a -2))) (= (slice a o l t (conv 1 1 p c g x w)) "
         "(conv 1 1 p c g (slice a o l t x) w)))",
         "(slice a o l t (conv 1 1 p c g x w))", "(conv 1 1 p c g (slice a o l t x) w)")},
    {"conv-slice-kernel", "an output-channel slice of a convolution is the convolution with the "
                          "kernel's output-channel slice (one group)",
     FA2("(sh Int) (sw Int) (p Int) (c Int) (o Int) (l Int) (t Int) (x T) (w T)",
         "(= (slice -3 o l t (conv sh sw p c 1 x w)) (conv sh sw p c 1 x (slice -4 o l t w)))",
         "(slice -3 o l t (conv sh sw p c 1 x w))", "(conv sh sw p c 1 x (slice -4 o l t w))")},
    {"conv-identity", "a stride-1 'same' convolution with the identity kernel is the identity",
     FA("(kh Int) (kw Int) (x T)", "(= (conv 1 1 0 0 1 x (iconv kh kw)) x)", "(conv 1 1 0 0 1 x (iconv kh kw))")},
    {"conv-identity-relu", "a stride-1 'same' convolution with the identity kernel and fused relu is relu",
     FA("(kh Int) (kw Int) (x T)", "(= (conv 1 1 0 1 1 x (iconv kh kw)) (relu x))", "(conv 1 1 0 1 1 x (iconv kh kw))")},
    {"conv-enlarge", "a 'same' convolution with a zero-padded (enlarged) kernel equals the one with the "
                     "original kernel",
     FA("(sh Int) (sw Int) (c Int) (g Int) (kh Int) (kw Int) (x T) (w T)",
        "(= (conv sh sw 0 c g x (enlarge kh kw w)) (conv sh sw 0 c g x w))",
        "(conv sh sw 0 c g x (enlarge kh kw w))")},
    {"conv-trans", "a convolution of transposed (spatially swapped) input and kernel is the transpose of "
                   "the convolution with swapped strides",
     FA("(sh Int) (sw Int) (p Int) (c Int) (g Int) (x T) (w T)",
        "(= (conv sh sw p c g (trans x) (trans w)) (trans (conv sw sh p c g x w)))",
        "(conv sh sw p c g (trans x) (trans w))")},
    {"conv-trans-input", "a convolution of a transposed input is the transpose of the convolution with the "
                         "transposed kernel and swapped strides",
     FA("(sh Int) (sw Int) (p Int) (c Int) (g Int) (x T) (w T)",
        "(= (conv sh sw p c g (trans x) w) (trans (conv sw sh p c g x (trans w))))",
        "(conv sh sw p c g (trans x) w)")},
    {"conv-trans-kernel", "a convolution with a transposed kernel is the transpose of the convolution of the "
                          "transposed input with swapped strides",
     FA("(sh Int) (sw Int) (p Int) (c Int) (g Int) (x T) (w T)",
        "(= (conv sh sw p c g x (trans w)) (trans (conv sw sh p c g (trans x) w)))",
        "(conv sh sw p c g x (trans w))")},
    {"iconv-trans", "the transpose of an identity kernel is the identity kernel of the swapped size",
     FA("(kh Int) (kw Int)", "(= (trans (iconv kh kw)) (iconv kw kh))", "(trans (iconv kh kw))")},
    {"iconv-enlarge", "an identity kernel is the 1x1 identity kernel enlarged (zero-padded) to its size",
     FA("(kh Int) (kw Int)",
        "(=> (not (and (= kh 1) (= kw 1))) (= (iconv kh kw) (enlarge kh kw (iconv 1 1))))", "(iconv kh kw)")},
    {"conv-subsample", "a strided 1x1 identity convolution (subsampling) of a stride-1 convolution is the "
                       "strided convolution",
     FA("(sh Int) (sw Int) (p Int) (a Int) (g Int) (x T) (w T)",
        "(= (conv sh sw 0 0 1 (conv 1 1 p a g x w) (iconv 1 1)) (conv sh sw p a g x w))",
        "(conv sh sw 0 0 1 (conv 1 1 p a g x w) (iconv 1 1))")},
    {"enlarge-ewadd", "enlarging a sum of kernels is the sum of the enlarged kernels",
     FA("(kh Int) (kw Int) " T2, "(= (enlarge kh kw (ewadd x y)) (ewadd (enlarge kh kw x) (enlarge kh kw y)))",
        "(enlarge kh kw (ewadd x y))")},
    {"enlarge-ewmul", "the product of two enlarged kernels is the enlarged product (zeros stay zero)",
     FA("(kh Int) (kw Int) " T2, "(= (ewmul (enlarge kh kw x) (enlarge kh kw y)) (enlarge kh kw (ewmul x y)))",
        "(ewmul (enlarge kh kw x) (enlarge kh kw y))")},
    {"enlarge-smul", "enlarging commutes with scalar multiplication",
     FA("(kh Int) (kw Int) (x T) (s T)", "(= (enlarge kh kw (smul x s)) (smul (enlarge kh kw x) s))",
        "(enlarge kh kw (smul x s))")},
    {"enlarge-concat", "enlarging a concat of kernels (along channels) is the concat of the enlarged kernels",
     FA("(kh Int) (kw Int) " CAT " " T2,
        "(=> (<= a -3) (= (enlarge kh kw (concat a n m x y)) (concat a n m (enlarge kh kw x) (enlarge kh kw y))))",
        "(enlarge kh kw (concat a n m x y))")},
    /* ---- 1x1 convolutions: (hw1 w) says w's last two axes have size 1, stated by the
       encoder from the rule's shapes; stride 1 and no activation make the convolution a
       linear map of each pixel's channels, which commutes with what acts per channel */
    {"conv1x1-avgpool", "a stride-1 1x1 convolution without activation commutes with average pooling",
     FA2("(g Int) (kh Int) (kw Int) (sh Int) (sw Int) (p Int) (x T) (w T)",
         "(=> (hw1 w) (= (conv 1 1 0 0 g (avgpool kh kw sh sw p x) w) "
         "(avgpool kh kw sh sw p (conv 1 1 0 0 g x w))))",
         "(conv 1 1 0 0 g (avgpool kh kw sh sw p x) w)", "(avgpool kh kw sh sw p (conv 1 1 0 0 g x w))")},
    {"conv1x1-mean", "a stride-1 1x1 convolution without activation commutes with a mean over a "
                     "spatial axis",
     FA2("(g Int) (b Int) (x T) (w T)",
         "(=> (and (hw1 w) (or (= b -1) (= b -2))) (= (mean b (conv 1 1 0 0 g x w)) "
         "(conv 1 1 0 0 g (mean b x) w)))",
         "(mean b (conv 1 1 0 0 g x w))", "(conv 1 1 0 0 g (mean b x) w)")},
    {"conv1x1-enlarge", "a stride-1 1x1 convolution whose activation keeps 0 commutes with enlarging "
                        "its input (zero padding stays zero)",
     FA2("(a Int) (g Int) (kh Int) (kw Int) (x T) (w T)",
         "(=> (and (hw1 w) (not (= a 2))) (= (conv 1 1 0 a g (enlarge kh kw x) w) "
         "(enlarge kh kw (conv 1 1 0 a g x w))))",
         "(conv 1 1 0 a g (enlarge kh kw x) w)", "(enlarge kh kw (conv 1 1 0 a g x w))")},
    {"conv1x1-stride", "a strided 1x1 convolution is the 1x1 convolution of the subsampled input (the "
                       "strided 1x1 identity convolution)",
     FA("(sh Int) (sw Int) (a Int) (g Int) (x T) (w T)",
        "(=> (and (hw1 w) (or (> sh 1) (> sw 1))) (= (conv sh sw 0 a g x w) "
        "(conv 1 1 0 a g (conv sh sw 0 0 1 x (iconv 1 1)) w)))",
        "(conv sh sw 0 a g x w) (hw1 w)")},
    {"conv-avgpool-kernel", "a 'same' convolution whose kernel is the average pooling of an enlarged 1x1 kernel "
                            "is the 1x1 convolution of the average pooling",
     FA("(sh Int) (sw Int) (a Int) (g Int) (kh Int) (kw Int) (x T) (w T)",
        "(=> (hw1 w) (= (conv sh sw 0 a g x (avgpool kh kw 1 1 0 (enlarge kh kw w))) "
        "(conv 1 1 0 a g (avgpool kh kw sh sw 0 x) w)))",
        "(conv sh sw 0 a g x (avgpool kh kw 1 1 0 (enlarge kh kw w)))")},
    {"enlarge-relu", "relu commutes with enlarging (relu keeps the zero padding)",
     FA2("(kh Int) (kw Int) (x T)", "(= (relu (enlarge kh kw x)) (enlarge kh kw (relu x)))",
         "(relu (enlarge kh kw x))", "(enlarge kh kw (relu x))")},
    {"enlarge-slice", "enlarging a batch or channel slice is the slice of the enlarged tensor",
     FA2("(kh Int) (kw Int) " SL " (x T)",
         "(=> (<= a -3) (= (enlarge kh kw (slice a o l t x)) (slice a o l t (enlarge kh kw x))))",
         "(enlarge kh kw (slice a o l t x))", "(slice a o l t (enlarge kh kw x))")},
    /* ---- pooling (pool kh kw sh sw pad x) */
    {"avgpool-as-conv", "average pooling (padding counted) is a depthwise convolution with the pooling "
                        "constant kernel",
     FA("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) (x T)",
        "(= (avgpool kh kw sh sw p x) (conv sh sw p 0 -1 x (pool kh kw)))", "(avgpool kh kw sh sw p x)")},
    {"avgpool-concat", "average pooling of a batch or channel concat is the concat of the poolings",
     FA("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) " CAT " " T2,
        "(=> (<= a -3) (= (avgpool kh kw sh sw p (concat a n m x y)) "
        "(concat a n m (avgpool kh kw sh sw p x) (avgpool kh kw sh sw p y))))",
        "(avgpool kh kw sh sw p (concat a n m x y))")},
    {"maxpool-concat", "max pooling of a batch or channel concat is the concat of the poolings",
     FA("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) " CAT " " T2,
        "(=> (<= a -3) (= (maxpool kh kw sh sw p (concat a n m x y)) "
        "(concat a n m (maxpool kh kw sh sw p x) (maxpool kh kw sh sw p y))))",
        "(maxpool kh kw sh sw p (concat a n m x y))")},
    {"avgpool-slice", "average pooling of a batch or channel slice is the slice of the pooling",
     FA2("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) " SL " (x T)",
         "(=> (<= a -3) (= (avgpool kh kw sh sw p (slice a o l t x)) "
         "(slice a o l t (avgpool kh kw sh sw p x))))",
         "(avgpool kh kw sh sw p (slice a o l t x))", "(slice a o l t (avgpool kh kw sh sw p x))")},
    {"maxpool-slice", "max pooling of a batch or channel slice is the slice of the pooling",
     FA2("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) " SL " (x T)",
         "(=> (<= a -3) (= (maxpool kh kw sh sw p (slice a o l t x)) "
         "(slice a o l t (maxpool kh kw sh sw p x))))",
         "(maxpool kh kw sh sw p (slice a o l t x))", "(slice a o l t (maxpool kh kw sh sw p x))")},
    {"maxpool-relu", "relu commutes with max pooling (both are monotone)",
     FA("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) (x T)",
        "(= (relu (maxpool kh kw sh sw p x)) (maxpool kh kw sh sw p (relu x)))",
        "(relu (maxpool kh kw sh sw p x))")},
    {"avgpool-trans", "average pooling of a transpose is the transpose of the pooling with swapped window "
                      "and strides",
     FA("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) (x T)",
        "(= (avgpool kh kw sh sw p (trans x)) (trans (avgpool kw kh sw sh p x)))",
        "(avgpool kh kw sh sw p (trans x))")},
    {"maxpool-trans", "max pooling of a transpose is the transpose of the pooling with swapped window "
                      "and strides",
     FA("(kh Int) (kw Int) (sh Int) (sw Int) (p Int) (x T)",
        "(= (maxpool kh kw sh sw p (trans x)) (trans (maxpool kw kh sw sh p x)))",
        "(maxpool kh kw sh sw p (trans x))")},
    {"pool-trans", "the transpose of the pooling constant kernel is the pooling kernel of the swapped size",
     FA("(kh Int) (kw Int)", "(= (trans (pool kh kw)) (pool kw kh))", "(trans (pool kh kw))")},
    /* ---- softmax, mean, layer-norm */
    {"softmax-concat", "softmax along one axis commutes with a concat along another",
     FA("(b Int) " CAT " " T2,
        "(=> (not (= a b)) (= (softmax b (concat a n m x y)) (concat a n m (softmax b x) (softmax b y))))",
        "(softmax b (concat a n m x y))")},
    {"softmax-slice", "softmax along one axis commutes with a slice along another",
     FA("(b Int) " SL " (x T)",
        "(=> (not (= a b)) (= (softmax b (slice a o l t x)) (slice a o l t (softmax b x))))",
        "(softmax b (slice a o l t x))")},
    {"softmax-trans", "softmax of a transpose is the transpose of softmax along the swapped axis",
     FA("(b Int) (x T)", "(= (softmax b (trans x)) (trans (softmax " SWAPAX("b") " x)))",
        "(softmax b (trans x))")},
    {"mean-ewadd", "mean is linear: the mean of a sum is the sum of the means",
     FA("(b Int) " T2, "(= (mean b (ewadd x y)) (ewadd (mean b x) (mean b y)))", "(mean b (ewadd x y))")},
    {"mean-smul", "a scalar factor moves out of a mean",
     FA("(b Int) (x T) (s T)", "(= (mean b (smul x s)) (smul (mean b x) s))", "(mean b (smul x s))")},
    {"mean-matmul-right", "the mean over columns of a product is the product with the column mean",
     FA(T2, "(= (mean -1 (matmul x y)) (matmul x (mean -1 y)))", "(mean -1 (matmul x y))")},
    {"mean-matmul-left", "the mean over rows of a product is the product of the row mean",
     FA(T2, "(= (mean -2 (matmul x y)) (matmul (mean -2 x) y))", "(mean -2 (matmul x y))")},
    {"mean-concat", "a mean along one axis commutes with a concat along another",
     FA("(b Int) " CAT " " T2,
        "(=> (not (= a b)) (= (mean b (concat a n m x y)) (concat a n m (mean b x) (mean b y))))",
        "(mean b (concat a n m x y))")},
    {"mean-slice", "a mean along one axis commutes with a slice along another",
     FA2("(b Int) " SL " (x T)",
         "(=> (not (= a b)) (= (mean b (slice a o l t x)) (slice a o l t (mean b x))))",
         "(mean b (slice a o l t x))", "(slice a o l t (mean b x))")},
    {"mean-idempotent", "the mean (keeping dims) of a mean along the same axis is that mean",
     FA("(b Int) (x T)", "(= (mean b (mean b x)) (mean b x))", "(mean b (mean b x))")},
    {"mean-trans", "mean of a transpose is the transpose of the mean along the swapped axis",
     FA("(b Int) (x T)", "(= (mean b (trans x)) (trans (mean " SWAPAX("b") " x)))", "(mean b (trans x))")},
    {"layernorm-concat", "layer-norm commutes with a concat along an axis before the normalised ones",
     FA("(b Int) " CAT " (x T) (y T) (g T) (c T)",
        "(=> (< a b) (= (layernorm b (concat a n m x y) g c) "
        "(concat a n m (layernorm b x g c) (layernorm b y g c))))",
        "(layernorm b (concat a n m x y) g c)")},
    {"layernorm-slice", "layer-norm commutes with a slice along an axis before the normalised ones",
     FA("(b Int) " SL " (x T) (g T) (c T)",
        "(=> (< a b) (= (layernorm b (slice a o l t x) g c) (slice a o l t (layernorm b x g c))))",
        "(layernorm b (slice a o l t x) g c)")},
    {"layernorm-concat-copies", "layer-norm of a tensor concatenated with itself along a normalised axis "
                                "(scale likewise, no bias) is the concat of the layer-norms",
     FA("(b Int) (a Int) (n Int) (x T) (g T)",
        "(=> (<= b a) (= (layernorm b (concat a n n x x) (concat a n n g g) zeros) "
        "(concat a n n (layernorm b x g zeros) (layernorm b x g zeros))))",
        "(layernorm b (concat a n n x x) (concat a n n g g) zeros)")},
    {"lnorm-concat-copies", "the unit-scale layer-norm of a tensor concatenated with itself along a normalised "
                            "axis is the concat of the layer-norms",
     FA("(b Int) (a Int) (n Int) (x T)",
        "(=> (<= b a) (= (lnorm b (concat a n n x x)) (concat a n n (lnorm b x) (lnorm b x))))",
        "(lnorm b (concat a n n x x))")},
    {"layernorm-scale-ewadd", "layer-norm is linear in its scale: a sum of scales gives the sum of the "
                              "layer-norms (the bias added once)",
     FA("(b Int) (x T) (g T) (h T) (c T)",
        "(= (layernorm b x (ewadd g h) c) (ewadd (layernorm b x g c) (layernorm b x h zeros)))",
        "(layernorm b x (ewadd g h) c)")},
    {"layernorm-scale-smul", "a scalar factor of layer-norm's scale moves out (no bias)",
     FA2("(b Int) (x T) (g T) (s T)",
         "(= (layernorm b x (smul g s) zeros) (smul (layernorm b x g zeros) s))",
         "(layernorm b x (smul g s) zeros)", "(smul (layernorm b x g zeros) s)")},
    {"layernorm-scale-factor", "layer-norm without bias is the unit-scale layer-norm times the scale",
     FA("(b Int) (x T) (g T)", "(= (layernorm b x g zeros) (ewmul (lnorm b x) g))", "(layernorm b x g zeros)")},
    {"lnorm-scalar", "a unit-scale layer-norm multiplied element-wise by a scalar is its scalar multiple",
     FA("(b Int) (x T) (s T)", "(=> (scalar s) (= (ewmul (lnorm b x) s) (smul (lnorm b x) s)))",
        "(ewmul (lnorm b x) s) (scalar s)")},
    /* x + e - mean(x + e) = x - mean(x) and the variance is unchanged when
     * e is one number (rank 0) added to every element: the normalised
     * values, and so any scale, bias and epsilon after them, are those of x */
    {"layernorm-shift", "layer-norm of a tensor plus a scalar is the layer-norm of the tensor",
     FA("(b Int) (x T) (e T) (g T) (c T)",
        "(=> (= (rnk e) 0) (= (layernorm b (ewadd x e) g c) (layernorm b x g c)))",
        "(layernorm b (ewadd x e) g c)")},
    {"lnorm-shift", "the unit-scale layer-norm of a tensor plus a scalar is the layer-norm of the tensor",
     FA("(b Int) (x T) (e T)", "(=> (= (rnk e) 0) (= (lnorm b (ewadd x e)) (lnorm b x)))", "(lnorm b (ewadd x e))")},
    /* ---- a slice next to an operand that lacks the sliced axis (a bias) */
    {"slice-bias", "a slice of a sum with an operand that lacks the sliced axis is the sum of the slice "
                   "and that operand",
     FA2(SL " (x T) (b T)",
        "(=> (< (rnk b) (- 0 a)) (= (slice a o l t (ewadd x b)) (ewadd (slice a o l t x) b)))",
        "(slice a o l t (ewadd x b))", "(ewadd (slice a o l t x) b)")},
    {"slice-bias-left", "a slice of a sum whose first operand lacks the sliced axis is the sum of that "
                        "operand and the slice",
     FA(SL " (x T) (b T)",
        "(=> (< (rnk b) (- 0 a)) (= (slice a o l t (ewadd b x)) (ewadd b (slice a o l t x))))",
        "(slice a o l t (ewadd b x))")},
    {"slice-bias-mul", "a slice of a product with an operand that lacks the sliced axis is the product of "
                       "the slice and that operand",
     FA2(SL " (x T) (b T)",
        "(=> (< (rnk b) (- 0 a)) (= (slice a o l t (ewmul x b)) (ewmul (slice a o l t x) b)))",
        "(slice a o l t (ewmul x b))", "(ewmul (slice a o l t x) b)")},
    /* ---- a concat next to an operand without the concat axis (a bias or a
     * scalar, broadcast alike over both parts); ewadd-comm and ewmul-comm
     * bring the operand to the right */
    {"concat-bias", "the sum of a concat and an operand that lacks the concat axis is the concat of the sums",
     FA2(CAT " (x T) (y T) (b T)",
         "(=> (< (rnk b) (- 0 a)) (= (ewadd (concat a n m x y) b) (concat a n m (ewadd x b) (ewadd y b))))",
         "(ewadd (concat a n m x y) b)", "(concat a n m (ewadd x b) (ewadd y b))")},
    {"concat-bias-mul", "the product of a concat and an operand that lacks the concat axis is the concat of "
                        "the products",
     FA2(CAT " (x T) (y T) (b T)",
         "(=> (< (rnk b) (- 0 a)) (= (ewmul (concat a n m x y) b) (concat a n m (ewmul x b) (ewmul y b))))",
         "(ewmul (concat a n m x y) b)", "(concat a n m (ewmul x b) (ewmul y b))")},
    {"pow-concat", "a power by a scalar of a concat is the concat of the powers",
     FA2(CAT " (x T) (y T) (e T)",
         "(=> (= (rnk e) 0) (= (pow (concat a n m x y) e) (concat a n m (pow x e) (pow y e))))",
         "(pow (concat a n m x y) e)", "(concat a n m (pow x e) (pow y e))")},
    /* ---- a scalar operand next to a transpose or a mean */
    {"pow-trans", "a power by a scalar commutes with transpose",
     FA2("(x T) (e T)", "(=> (= (rnk e) 0) (= (pow (trans x) e) (trans (pow x e))))",
         "(pow (trans x) e)", "(trans (pow x e))")},
    {"trans-scalar-ewadd", "transpose of a sum with a scalar is the sum of the transpose and the scalar",
     FA2("(x T) (s T)", "(=> (= (rnk s) 0) (= (trans (ewadd x s)) (ewadd (trans x) s)))",
         "(trans (ewadd x s))", "(ewadd (trans x) s)")},
    {"trans-scalar-ewmul", "transpose of a product with a scalar is the product of the transpose and the scalar",
     FA2("(x T) (s T)", "(=> (= (rnk s) 0) (= (trans (ewmul x s)) (ewmul (trans x) s)))",
         "(trans (ewmul x s))", "(ewmul (trans x) s)")},
    {"mean-bias", "the mean along an axis of a sum with an operand that lacks that axis is the sum of the "
                  "mean and that operand",
     FA2("(b Int) (x T) (c T)", "(=> (< (rnk c) (- 0 b)) (= (mean b (ewadd x c)) (ewadd (mean b x) c)))",
         "(mean b (ewadd x c))", "(ewadd (mean b x) c)")},
    {"mean-bias-mul", "the mean along an axis of a product with an operand that lacks that axis is the "
                      "product of the mean and that operand",
     FA2("(b Int) (x T) (c T)", "(=> (< (rnk c) (- 0 b)) (= (mean b (ewmul x c)) (ewmul (mean b x) c)))",
         "(mean b (ewmul x c))", "(ewmul (mean b x) c)")},
    /* ---- a batched matmul whose other operand lacks the batch axis (broadcast) */
    {"matmul-concat-batch-bcast", "a batched matmul of a batch concat by an operand without that axis is "
                                  "the concat of the matmuls",
     FA2(CAT " (x T) (y T) (w T)",
         "(=> (and (<= a -3) (< (rnk w) (- 0 a))) (= (matmul (concat a n m x y) w) "
         "(concat a n m (matmul x w) (matmul y w))))",
         "(matmul (concat a n m x y) w)", "(concat a n m (matmul x w) (matmul y w))")},
    {"matmul-concat-batch-bcast-right", "a batched matmul of an operand without the batch axis by a batch "
                                        "concat is the concat of the matmuls",
     FA2(CAT " (w T) (x T) (y T)",
         "(=> (and (<= a -3) (< (rnk w) (- 0 a))) (= (matmul w (concat a n m x y)) "
         "(concat a n m (matmul w x) (matmul w y))))",
         "(matmul w (concat a n m x y))", "(concat a n m (matmul w x) (matmul w y))")},
    {"matmul-slice-batch-bcast", "a batch slice of a matmul whose second operand lacks that axis is the "
                                 "matmul of the batch slice",
     FA2(SL " (x T) (w T)",
         "(=> (and (<= a -3) (< (rnk w) (- 0 a))) (= (slice a o l t (matmul x w)) "
         "(matmul (slice a o l t x) w)))",
         "(slice a o l t (matmul x w))", "(matmul (slice a o l t x) w)")},
    /* ---- reshapes: every reshape is a view of its input's elements in
     * row-major order; sizes are ids of the rule's symbolic dims, so these
     * hold wherever the rule's dims do (prove_encode.c) */
    {"view-view", "a reshape of a reshape is one reshape",
     FA("(s Int) (t Int) (x T)", "(= (view s (view t x)) (view s x))", "(view s (view t x))")},
    {"view-same", "a reshape to the tensor's own shape is the tensor",
     FA("(s Int) (x T)", "(=> (= (shp x) s) (= (view s x) x))", "(view s x)")},
    {"flat-view", "flattening the first two axes is a reshape",
     FA("(x T)", "(= (flat x) (view (shp (flat x)) x))", "(flat x)")},
    {"unflat-view", "unflattening the first axis is a reshape",
     FA("(l Int) (x T)", "(= (unflat l x) (view (shp (unflat l x)) x))", "(unflat l x)")},
    {"hsplit-view", "splitting the last axis is a reshape",
     FA("(h Int) (x T)", "(= (hsplit h x) (view (shp (hsplit h x)) x))", "(hsplit h x)")},
    {"hmerge-view", "merging the last two axes is a reshape",
     FA("(x T)", "(= (hmerge x) (view (shp (hmerge x)) x))", "(hmerge x)")},
    UNARY_VIEW("relu", "relu"),
    UNARY_VIEW("sigmoid", "sigmoid"),
    UNARY_VIEW("tanh", "tanh"),
    UNARY_VIEW("gelu", "gelu"),
    UNARY_VIEW("erf", "erf"),
    UNARY_VIEW("exp", "exp"),
    {"pow-view", "a power by a scalar commutes with a reshape",
     FA("(s Int) (x T) (e T)", "(=> (= (rnk e) 0) (= (pow (view s x) e) (view s (pow x e))))",
        "(pow (view s x) e)")},
    {"pow-slice", "a power by a scalar commutes with a slice",
     FA(SL " (x T) (e T)",
        "(=> (= (rnk e) 0) (= (pow (slice a o l t x) e) (slice a o l t (pow x e))))",
        "(pow (slice a o l t x) e)")},
    {"ewadd-view", "the sum of reshapes of two tensors of one shape is the reshape of their sum",
     FA2("(s Int) (x T) (y T)",
         "(=> (= (shp x) (shp y)) (= (ewadd (view s x) (view s y)) (view s (ewadd x y))))",
         "(ewadd (view s x) (view s y))", "(view s (ewadd x y))")},
    {"ewmul-view", "the product of reshapes of two tensors of one shape is the reshape of their product",
     FA("(s Int) (x T) (y T)",
        "(=> (= (shp x) (shp y)) (= (ewmul (view s x) (view s y)) (view s (ewmul x y))))",
        "(ewmul (view s x) (view s y))")},
    {"smul-view", "scalar multiplication commutes with a reshape",
     FA2("(s Int) (x T) (c T)", "(= (smul (view s x) c) (view s (smul x c)))", "(smul (view s x) c)",
         "(view s (smul x c))")},
    {"ewadd-bias-view", "a bias (rank 1 or 0) added to a reshape that keeps the last axis is the reshape "
                        "of the sum",
     FA("(s Int) (x T) (b T)",
        "(=> (and (<= (rnk b) 1) (= (lastd s) (lastd (shp x)))) "
        "(= (ewadd (view s x) b) (view s (ewadd x b))))",
        "(ewadd (view s x) b)")},
    {"ewadd-bias-view-left", "a reshape that keeps the last axis added to a bias (rank 1 or 0) is the "
                             "reshape of the sum",
     FA("(s Int) (x T) (b T)",
        "(=> (and (<= (rnk b) 1) (= (lastd s) (lastd (shp x)))) "
        "(= (ewadd b (view s x)) (view s (ewadd b x))))",
        "(ewadd b (view s x))")},
    {"ewadd-scalar-view", "a scalar added to a reshape is the reshape of the sum",
     FA2("(s Int) (x T) (b T)", "(=> (= (rnk b) 0) (= (ewadd (view s x) b) (view s (ewadd x b))))",
         "(ewadd (view s x) b)", "(view s (ewadd x b))")},
    {"ewmul-scalar-view", "a reshape multiplied by a scalar is the reshape of the product",
     FA2("(s Int) (x T) (b T)", "(=> (= (rnk b) 0) (= (ewmul (view s x) b) (view s (ewmul x b))))",
         "(ewmul (view s x) b)", "(view s (ewmul x b))")},
    {"ewmul-bias-view", "a reshape that keeps the last axis multiplied by a bias (rank 1) is the reshape of "
                        "the product",
     FA("(s Int) (x T) (b T)",
        "(=> (and (<= (rnk b) 1) (= (lastd s) (lastd (shp x)))) "
        "(= (ewmul (view s x) b) (view s (ewmul x b))))",
        "(ewmul (view s x) b)")},
    /* a reshape that only touches some axes commutes with a concat or slice
     * along an axis it keeps (axes counted from the last, so the same on
     * both sides when the reshaped axes are in front) */
    {"hsplit-concat", "splitting the last axis of a concat along another axis is the concat of the splits",
     FA2("(h Int) " CAT " " T2,
         "(=> (<= a -2) (= (hsplit h (concat a n m x y)) (concat (- a 1) n m (hsplit h x) (hsplit h y))))",
         "(hsplit h (concat a n m x y))", "(concat (- a 1) n m (hsplit h x) (hsplit h y))")},
    {"hsplit-slice", "a slice along an axis before the split last axis commutes with splitting it",
     FA2("(h Int) " SL " (x T)",
         "(=> (<= a -3) (= (slice a o l t (hsplit h x)) (hsplit h (slice (+ a 1) o l t x))))",
         "(slice a o l t (hsplit h x))", "(hsplit h (slice (+ a 1) o l t x))")},
    /* The heads of a part of the last axis are a slice of the heads axis:
     * [o, o+l) of the last axis (size n) split into m heads is heads
     * [p, p+m) of the q heads of the whole axis when both cut heads of one
     * size (l/m = n/q) and the part starts at a head boundary (o = p n/q).
     * The counts are ids of symbolic dims; hnum gives each its size at the
     * rule's own shapes (prove_encode.c), where the offsets are numbers too.
     * One multi-pattern over both sides: q and p occur on the right only. */
    {"hsplit-slice-last", "splitting a slice of the last axis into heads is a slice of the heads axis when the slice starts and ends at head boundaries",
     FA("(h Int) (hh Int) (o Int) (l Int) (n Int) (p Int) (m Int) (q Int) (x T)",
        "(=> (and (= (hnum h) m) (= (hnum hh) q) (= (* l q) (* m n)) (= (* o q) (* p n))) "
        "(= (hsplit h (slice -1 o l n x)) (slice -2 p m q (hsplit hh x))))",
        "(hsplit h (slice -1 o l n x)) (slice -2 p m q (hsplit hh x))")},
    {"hmerge-concat", "merging the last two axes of a concat along an earlier axis is the concat of the merges",
     FA2(CAT " " T2,
         "(=> (<= a -3) (= (hmerge (concat a n m x y)) (concat (+ a 1) n m (hmerge x) (hmerge y))))",
         "(hmerge (concat a n m x y))", "(concat (+ a 1) n m (hmerge x) (hmerge y))")},
    {"hmerge-slice", "a slice along an axis before the merged last two commutes with merging them",
     FA2(SL " (x T)",
         "(=> (<= a -2) (= (slice a o l t (hmerge x)) (hmerge (slice (- a 1) o l t x))))",
         "(slice a o l t (hmerge x))", "(hmerge (slice (- a 1) o l t x))")},
    {"flat-concat", "flattening the first two axes of a concat along a later axis is the concat of the "
                    "flattened parts",
     FA2(CAT " " T2,
         "(=> (<= (- 0 a) (- (rnk x) 2)) (= (flat (concat a n m x y)) (concat a n m (flat x) (flat y))))",
         "(flat (concat a n m x y))", "(concat a n m (flat x) (flat y))")},
    {"flat-slice", "a slice along an axis after the first two commutes with flattening them",
     FA2(SL " (x T)",
         "(=> (<= (- 0 a) (- (rnk x) 2)) (= (slice a o l t (flat x)) (flat (slice a o l t x))))",
         "(slice a o l t (flat x))", "(flat (slice a o l t x))")},
    {"unflat-concat", "unflattening the first axis of a concat along a later axis is the concat of the "
                      "unflattened parts",
     FA2("(k Int) " CAT " " T2,
         "(=> (<= (- 0 a) (- (rnk x) 1)) (= (unflat k (concat a n m x y)) "
         "(concat a n m (unflat k x) (unflat k y))))",
         "(unflat k (concat a n m x y))", "(concat a n m (unflat k x) (unflat k y))")},
    {"unflat-slice", "a slice along an axis after the first commutes with unflattening it",
     FA2("(k Int) " SL " (x T)",
         "(=> (<= (- 0 a) (- (rnk x) 1)) (= (slice a o l t (unflat k x)) (unflat k (slice a o l t x))))",
         "(slice a o l t (unflat k x))", "(unflat k (slice a o l t x))")},
    /* shapes of results the axioms build: what the shape facts state of the
     * rule's own values, so a reshape of such a result is a view too */
    {"ewadd-shape", "the sum of two tensors of one shape has that shape",
     FA("(x T) (y T)", "(=> (= (shp x) (shp y)) (= (shp (ewadd x y)) (shp x)))", "(ewadd x y)")},
    {"ewmul-shape", "the product of two tensors of one shape has that shape",
     FA("(x T) (y T)", "(=> (= (shp x) (shp y)) (= (shp (ewmul x y)) (shp x)))", "(ewmul x y)")},
    {"ewadd-scalar-shape", "a tensor plus a scalar has the tensor's shape",
     FA("(x T) (s T)", "(=> (= (rnk s) 0) (= (shp (ewadd x s)) (shp x)))", "(ewadd x s)")},
    {"ewmul-scalar-shape", "a tensor times a scalar has the tensor's shape",
     FA("(x T) (s T)", "(=> (= (rnk s) 0) (= (shp (ewmul x s)) (shp x)))", "(ewmul x s)")},
    {"smul-shape", "scalar multiplication keeps the shape",
     FA("(x T) (s T)", "(= (shp (smul x s)) (shp x))", "(smul x s)")},
    {"pow-shape", "a power by a scalar keeps the shape",
     FA("(x T) (e T)", "(=> (= (rnk e) 0) (= (shp (pow x e)) (shp x)))", "(pow x e)")},
    {"hmerge-shape", "merging the last two axes of tensors of one shape gives one shape",
     FA("(x T) (y T)", "(=> (= (shp x) (shp y)) (= (shp (hmerge x)) (shp (hmerge y))))", "(hmerge x) (hmerge y)")},
    {"hsplit-shape", "splitting the last axis of tensors of one shape alike gives one shape",
     FA("(h Int) (x T) (y T)", "(=> (= (shp x) (shp y)) (= (shp (hsplit h x)) (shp (hsplit h y))))",
        "(hsplit h x) (hsplit h y)")},
    {"flat-shape", "flattening the first two axes of tensors of one shape gives one shape",
     FA("(x T) (y T)", "(=> (= (shp x) (shp y)) (= (shp (flat x)) (shp (flat y))))", "(flat x) (flat y)")},
    {"unflat-shape", "unflattening the first axis of tensors of one shape alike gives one shape",
     FA("(k Int) (x T) (y T)", "(=> (= (shp x) (shp y)) (= (shp (unflat k x)) (shp (unflat k y))))",
        "(unflat k x) (unflat k y)")},
    {"matmul-flat", "a matmul by a matrix of flattened rows is the flattened matmul",
     FA("(x T) (w T)", "(=> (= (rnk w) 2) (= (matmul (flat x) w) (flat (matmul x w))))",
        "(matmul (flat x) w)")},
    {"matmul-unflat", "a matmul by a matrix of unflattened rows is the unflattened matmul",
     FA("(l Int) (x T) (w T)", "(=> (= (rnk w) 2) (= (matmul (unflat l x) w) (unflat l (matmul x w))))",
        "(matmul (unflat l x) w)")},
    {"layernorm-flat", "layer-norm along the last axis (scale and bias of rank 1 or 0) commutes with "
                       "flattening the first two axes",
     FA("(x T) (g T) (c T)",
        "(=> (and (<= (rnk g) 1) (or (= c zeros) (<= (rnk c) 1))) "
        "(= (layernorm -1 (flat x) g c) (flat (layernorm -1 x g c))))",
        "(layernorm -1 (flat x) g c)")},
    {"layernorm-unflat", "layer-norm along the last axis (scale and bias of rank 1 or 0) commutes with "
                         "unflattening the first axis",
     FA("(l Int) (x T) (g T) (c T)",
        "(=> (and (<= (rnk g) 1) (or (= c zeros) (<= (rnk c) 1))) "
        "(= (layernorm -1 (unflat l x) g c) (unflat l (layernorm -1 x g c))))",
        "(layernorm -1 (unflat l x) g c)")},
    {"lnorm-flat", "the unit-scale layer-norm along the last axis commutes with flattening the first two axes",
     FA("(x T)", "(= (lnorm -1 (flat x)) (flat (lnorm -1 x)))", "(lnorm -1 (flat x))")},
    {"lnorm-unflat", "the unit-scale layer-norm along the last axis commutes with unflattening the first axis",
     FA("(l Int) (x T)", "(= (lnorm -1 (unflat l x)) (unflat l (lnorm -1 x)))", "(lnorm -1 (unflat l x))")},
    {"softmax-flat", "softmax along the last axis commutes with flattening the first two axes",
     FA("(x T)", "(= (softmax -1 (flat x)) (flat (softmax -1 x)))", "(softmax -1 (flat x))")},
    {"softmax-unflat", "softmax along the last axis commutes with unflattening the first axis",
     FA("(l Int) (x T)", "(= (softmax -1 (unflat l x)) (unflat l (softmax -1 x)))",
        "(softmax -1 (unflat l x))")},
    {"mean-flat", "a mean along the last axis commutes with flattening the first two axes",
     FA("(x T)", "(= (mean -1 (flat x)) (flat (mean -1 x)))", "(mean -1 (flat x))")},
    {"mean-unflat", "a mean along the last axis commutes with unflattening the first axis",
     FA("(l Int) (x T)", "(= (mean -1 (unflat l x)) (unflat l (mean -1 x)))", "(mean -1 (unflat l x))")},
    /* any reshape that keeps the last axis (guard lastd: the target's last
     * dim is x's) regroups whole rows of it, which the last-axis softmax and
     * layer-norms act on one by one (a layer-norm's scale and bias over the
     * last axis have rank 1 or 0: ir/ops_norm.c) */
    {"softmax-view", "softmax along the last axis commutes with a reshape that keeps the last axis",
     FA("(s Int) (x T)",
        "(=> (= (lastd s) (lastd (shp x))) (= (softmax -1 (view s x)) (view s (softmax -1 x))))",
        "(softmax -1 (view s x))")},
    {"layernorm-view", "layer-norm along the last axis commutes with a reshape that keeps the last axis",
     FA("(s Int) (x T) (g T) (c T)",
        "(=> (= (lastd s) (lastd (shp x))) (= (layernorm -1 (view s x) g c) (view s (layernorm -1 x g c))))",
        "(layernorm -1 (view s x) g c)")},
    {"lnorm-view", "the unit-scale layer-norm along the last axis commutes with a reshape that keeps the last axis",
     FA("(s Int) (x T)",
        "(=> (= (lastd s) (lastd (shp x))) (= (lnorm -1 (view s x)) (view s (lnorm -1 x))))",
        "(lnorm -1 (view s x))")},
};

int xf_verify_axiom_count(void)
{
    return (int)(sizeof axioms / sizeof axioms[0]);
}

const xf_axiom_info *xf_verify_axiom(int i)
{
    if (i < 0 || i >= xf_verify_axiom_count()) return NULL;
    return &axioms[i];
}

int xf_verify_axiom_find(const char *name)
{
    for (int i = 0; i < xf_verify_axiom_count(); i++)
        if (strcmp(axioms[i].name, name) == 0) return i;
    return -1;
}
