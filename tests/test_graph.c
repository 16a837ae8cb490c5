#include "testutil.h"
START_TEST(placeholder) { ck_assert_int_eq(1, 1); }
END_TEST
int main(void) { Suite *s = suite_create("graph"); TCase *t = tcase_create("x"); tcase_add_test(t, placeholder); suite_add_tcase(s, t); return xf_test_run(s); }
