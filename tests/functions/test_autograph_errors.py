"""AutoGraph's errors, with TF's messages and types, and where they point: a variable
a tensor if assigns in one branch only, a tensor loop's variable undefined before it or
changing dtype or shape, an error inside converted code (the user's line), and the
fallback for a function whose source cannot be read."""

import traceback
import warnings

import numpy as np
import pytest

import gradtape as gt


def test_a_variable_defined_in_one_branch_and_used_after_raises_tf_error():
    @gt.function
    def f(x):
        if x > 0:
            y = x * 2.0
        return y

    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch"):
        f(gt.constant(1.0))


def test_a_python_if_may_define_a_variable_in_one_branch():
    @gt.function
    def f(x, flag):
        if flag:
            y = x * 2.0
        return y

    assert f(gt.constant(1.5), True).numpy() == 3.0
    with pytest.raises(UnboundLocalError, match="'y' is used before assignment"):
        f(gt.constant(1.5), False)


def test_a_loop_variable_undefined_before_a_tensor_loop_raises_tf_error():
    @gt.function
    def f(n):
        for i in gt.range(n):
            last = i * 2
        return last

    with pytest.raises(ValueError, match="'last' must be defined before the loop"):
        f(gt.constant(3))


def test_a_loop_variable_changing_dtype_raises_tf_type_error():
    @gt.function
    def f(n):
        x = gt.constant(0)
        while x < n:
            x = gt.cast(x, gt.float32) + 1.5
        return x

    with pytest.raises(TypeError, match="'x' has dtype int32 before the loop, but dtype "
                                        "float32 after one iteration"):
        f(gt.constant(3))


def test_a_loop_variable_changing_shape_raises_tf_value_error():
    @gt.function
    def f(n):
        x = gt.zeros([1])
        for _ in gt.range(n):
            x = gt.concat([x, x], 0)
        return x

    with pytest.raises(ValueError, match=r"'x' has shape \(1,\) before the loop, but shape "
                                         r"\(2,\) after one iteration"):
        f(gt.constant(3))


def test_branches_with_different_dtypes_raise_tf_type_error():
    @gt.function
    def f(x):
        if x > 0:
            y = gt.constant(1)
        else:
            y = gt.constant(1.0)
        return y

    with pytest.raises(TypeError, match="'y' has dtype int32 in the main branch, but "
                                        "dtype float32 in the else branch"):
        f(gt.constant(1.0))


def test_an_error_in_converted_code_points_at_the_users_line():
    @gt.function
    def f(x):
        if x > 0:
            y = gt.reshape(x, [7])  # the failing line
        else:
            y = x
        return y

    with pytest.raises(Exception) as info:
        f(gt.constant([1.0, 2.0]) [0])
    frames = traceback.extract_tb(info.tb)
    user = [fr for fr in frames if fr.filename == __file__]
    assert user and user[-1].line == "y = gt.reshape(x, [7])  # the failing line"


def test_a_function_without_source_falls_back_with_one_warning():
    namespace = {"gt": gt}
    exec("def g(x):\n    if x > 0:\n        return x * 2.0\n    return -x\n", namespace)
    g = gt.function(namespace["g"])
    with pytest.warns(UserWarning, match="AutoGraph could not convert g") as caught:
        assert g(gt.constant(2.0)).numpy() == 4.0
    assert caught[0].filename == "<string>" and caught[0].lineno == 1  # its definition
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning was the one: no second
        assert g(gt.constant(-2.0)).numpy() == 2.0  # traced as written: a guard
        assert gt.function(namespace["g"])(gt.constant(3.0)).numpy() == 6.0


def test_a_function_without_source_or_control_flow_is_traced_without_a_warning():
    namespace = {"gt": gt}
    exec("def double(x):\n    return x * 2.0\n", namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to convert: nothing to warn about
        assert gt.function(namespace["double"])(gt.constant(2.0)).numpy() == 4.0


def test_a_builtin_falls_back_with_a_warning_and_runs():
    with pytest.warns(UserWarning, match="AutoGraph could not convert"):
        out = gt.function(np.negative)(gt.constant([1.0, -2.0]))
    np.testing.assert_array_equal(np.asarray(out), [-1.0, 2.0])
