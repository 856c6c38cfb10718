"""gt.image against TF's documented definitions: resize's kernels with half-pixel centers
(values from TF's docs and by hand), its dtypes and aspect ratio rule; the flips, crops,
pads and standardization; gradients of the resize primitive against finite differences
in float64 to second order, its JVP and batching; Dask block-wise equals NumPy."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ops import image as resizing
from gradtape.testing import check_grads

RNG = np.random.default_rng(5)
METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
           "mitchellcubic"]


def test_resize_bilinear_is_tfs_docs_example():
    # tf.image.resize's docstring: the 5x5 identity resized to [3, 5].
    image = np.eye(5, dtype=np.float32)[None, ..., None]
    out = gt.image.resize(image, [3, 5])[0, ..., 0].numpy()
    np.testing.assert_allclose(out, [[2 / 3, 1 / 3, 0, 0, 0], [0, 0, 1, 0, 0],
                                     [0, 0, 0, 1 / 3, 2 / 3]], rtol=1e-6, atol=1e-7)
    # and its aspect-ratio example: [10, 20] keeps the square, 10 x 10
    assert gt.image.resize(image, [10, 20], preserve_aspect_ratio=True).shape == (1, 10, 10, 1)
    assert gt.image.resize(np.zeros((3, 6, 1)), [4, 4],
                           preserve_aspect_ratio=True).shape == (2, 4, 1)


def test_resize_methods_by_hand_along_one_axis():
    row = np.array([1.0, 2.0, 4.0, 8.0]).reshape(1, 4, 1)  # height 1, width 4
    def along(method, width, **kw):
        return gt.image.resize(row, [1, width], method=method, **kw).numpy().ravel()
    # nearest: source floor((i + 0.5) * 4/3): 0, 2, 3
    np.testing.assert_array_equal(along("nearest", 3), [1, 4, 8])
    # area 4 -> 3: each output covers 4/3 inputs: (1 + 2/3*... ) by overlap
    np.testing.assert_allclose(along("area", 3), [(1 + 2 / 3) * 3 / 4,
                                                   (2 / 3 * 2 + 2 / 3 * 4) * 3 / 4,
                                                   (1 / 3 * 4 + 8) * 3 / 4], rtol=1e-6)
    # bilinear 4 -> 2: sources 0.5 and 2.5 (half-pixel centers)
    np.testing.assert_allclose(along("bilinear", 2), [1.5, 6.0], rtol=1e-6)
    # bicubic (Keys a = -0.5) 4 -> 2 at source 0.5: taps -1 (dropped), 0, 1, 2 with
    # weights K(1.5), K(0.5), K(0.5), K(1.5) = -0.0625, 0.5625, 0.5625, -0.0625,
    # renormalized over the three inside
    w = np.array([0.5625, 0.5625, -0.0625])
    np.testing.assert_allclose(along("bicubic", 2)[0], w @ [1, 2, 4] / w.sum(), rtol=1e-6)
    # antialiased bilinear 4 -> 2: the triangle widened to radius 2 around source 1.0
    w = np.array([0.75, 0.75, 0.25])  # taps 0, 1, 2: triangle((tap + 0.5 - 1) / 2)
    np.testing.assert_allclose(along("bilinear", 2, antialias=True)[0],
                               w @ [1, 2, 4] / w.sum(), rtol=1e-6)
    # lanczos3 4 -> 2 at source 1.0: taps 0..3 at distances -0.5, 0.5, 1.5, 2.5 of
    # 3 sin(pi d) sin(pi d / 3) / (pi d)^2, normalized
    d = np.arange(4) + 0.5 - 1.0
    w = 3 * np.sin(np.pi * d) * np.sin(np.pi * d / 3) / (np.pi * d) ** 2
    np.testing.assert_allclose(along("lanczos3", 2)[0], w @ [1, 2, 4, 8] / w.sum(),
                               rtol=1e-6)
    # mitchellcubic (B = C = 1/3) at the same taps: 8/9 - 2d^2 + 7/6|d|^3 inside 1,
    # 16/9 - 10/3|d| + 2d^2 - 7/18|d|^3 inside 2
    a = np.abs(d)
    w = np.where(a < 1, 8 / 9 - 2 * a ** 2 + 7 / 6 * a ** 3,
                 np.where(a < 2, 16 / 9 - 10 / 3 * a + 2 * a ** 2 - 7 / 18 * a ** 3, 0))
    np.testing.assert_allclose(along("mitchellcubic", 2)[0], w @ [1, 2, 4, 8] / w.sum(),
                               rtol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_keeps_constants_and_has_tfs_dtype(method):
    image = np.full((2, 5, 7, 3), 3, np.uint8)
    out = gt.image.resize(image, [4, 9], method=method)
    assert out.shape == (2, 4, 9, 3)
    assert out.dtype == (np.uint8 if method == "nearest" else np.float32)
    np.testing.assert_allclose(out.numpy(), 3, rtol=1e-5)
    assert gt.image.resize(image[0], [2, 2], method=method).shape == (2, 2, 3)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("size", [(3, 8), (7, 2)])
def test_resize_gradients_to_second_order(method, size, check_jvp):
    x = RNG.standard_normal((2, 5, 4, 2))
    antialias = method in ("bilinear", "bicubic") and size == (3, 8)

    def f(t):
        return resizing.resize(t, (1, 2), size, method, antialias)

    check_grads(f, [x], order=2)
    check_jvp(f, [x])


def test_resize_gradient_through_the_public_float32_function():
    x = gt.constant(RNG.standard_normal((1, 4, 4, 1)).astype(np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.image.resize(x, [2, 2], method="area")
    # area 4 -> 2 averages 2x2 blocks: each input gets a quarter
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 0.25)


def test_resize_batching_rules(check_batching):
    x = RNG.standard_normal((2, 5, 4, 3))
    check_batching(lambda t: resizing.resize(t, (1, 2), (3, 6), "bicubic"), [x])
    g = RNG.standard_normal((2, 3, 6, 3))
    vjp = lambda t, c: resizing.resize_p.vjp(c, None, t, axes=(1, 2), out_size=(3, 6),  # noqa: E731
                                             method="bilinear", antialias=False)[0]
    check_batching(vjp, [x, g], batched=[False, True])


def test_resize_bad_arguments():
    with pytest.raises(ValueError, match="3 or 4"):
        gt.image.resize(np.zeros((4, 4)), [2, 2])
    with pytest.raises(ValueError, match="2 elements"):
        gt.image.resize(np.zeros((4, 4, 1)), [2])
    with pytest.raises(ValueError, match="positive"):
        gt.image.resize(np.zeros((4, 4, 1)), [0, 2])
    with pytest.raises(ValueError, match="not implemented"):
        gt.image.resize(np.zeros((4, 4, 1)), [2, 2], method="cubic")
    assert gt.image.ResizeMethod.NEAREST_NEIGHBOR == "nearest"


def test_flips_crops_and_pads():
    image = np.arange(2 * 3 * 4 * 1).reshape(2, 3, 4, 1)
    np.testing.assert_array_equal(gt.image.flip_left_right(image).numpy(), image[:, :, ::-1])
    np.testing.assert_array_equal(gt.image.flip_up_down(image[0]).numpy(), image[0, ::-1])
    crop = gt.image.crop_to_bounding_box(image, 1, 1, 2, 2).numpy()
    np.testing.assert_array_equal(crop, image[:, 1:3, 1:3])
    padded = gt.image.pad_to_bounding_box(image[0], 1, 2, 5, 7).numpy()
    assert padded.shape == (5, 7, 1) and padded.sum() == image[0].sum()
    np.testing.assert_array_equal(padded[1:4, 2:6], image[0])
    with pytest.raises(ValueError, match="width must be >= target"):
        gt.image.crop_to_bounding_box(image, 0, 3, 2, 2)
    with pytest.raises(ValueError, match="height must be <= target"):
        gt.image.pad_to_bounding_box(image, 1, 0, 3, 4)
    with pytest.raises(ValueError, match="3 or 4"):
        gt.image.flip_left_right(np.zeros((3, 3)))
    check_grads(lambda t: gt.image.pad_to_bounding_box(
        gt.image.crop_to_bounding_box(gt.image.flip_left_right(t), 0, 1, 2, 2), 1, 0, 4, 3),
        [RNG.standard_normal((3, 4, 2))], order=2)


def test_random_flips_follow_tfs_rule_and_gt_random_seeds():
    batch = np.arange(8 * 1 * 3 * 1, dtype=np.float32).reshape(8, 1, 3, 1)
    gt.random.set_seed(7)
    out = gt.image.random_flip_left_right(batch, seed=3).numpy()
    gt.random.set_seed(7)
    draws = gt.random.uniform([8], 0, 1.0, seed=3).numpy()
    for image, got, u in zip(batch, out, draws):  # a batch image flips when u > 0.5
        np.testing.assert_array_equal(got, image[:, ::-1] if u > 0.5 else image)
    assert 0 < sum(draws > 0.5) < 8  # both cases were seen
    single = np.arange(4.0).reshape(2, 2, 1)
    outcomes = []
    for op_seed in range(6):  # a single image flips when its draw is below 0.5
        gt.random.set_seed(7)
        got = gt.image.random_flip_up_down(single, seed=op_seed).numpy()
        gt.random.set_seed(7)
        u = float(gt.random.uniform([], 0, 1.0, seed=op_seed).numpy())
        np.testing.assert_array_equal(got, single[::-1] if u < 0.5 else single)
        outcomes.append(u < 0.5)
    assert any(outcomes) and not all(outcomes)


def test_per_image_standardization_is_tfs_formula():
    image = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    x = image.astype(np.float32)
    expected = (x - x.mean()) / max(x.std(), 1 / np.sqrt(12))
    out = gt.image.per_image_standardization(image)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    flat = np.full((1, 2, 2, 1), 5.0)  # stddev 0: divided by 1/sqrt(N), not 0
    np.testing.assert_array_equal(gt.image.per_image_standardization(flat).numpy(), 0.0)
    check_grads(gt.image.per_image_standardization, [RNG.standard_normal((2, 3, 2, 2))],
                order=2)


def test_resize_compiled_equals_eager():
    x = gt.constant(RNG.standard_normal((2, 5, 6, 3)).astype(np.float32))

    def loss(t):
        return gt.reduce_sum(gt.image.resize(t, [7, 4], method="bicubic") ** 2)

    @gt.function
    def step(t):
        with gt.GradientTape() as tape:
            tape.watch(t)
            value = loss(t)
        return tape.gradient(value, t)

    with gt.GradientTape() as tape:
        tape.watch(x)
        value = loss(x)
    eager = tape.gradient(value, x).numpy()
    for _ in range(3):
        np.testing.assert_allclose(step(x).numpy(), eager, rtol=1e-5)


def test_a_tf_image_name_gradtape_lacks_says_so():
    with pytest.raises(AttributeError, match="tf.image.rgb_to_grayscale. is TensorFlow's"):
        gt.image.rgb_to_grayscale  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_op'$"):
        gt.image.no_such_op  # noqa: B018


def test_rot90_transpose_central_crop_and_crop_or_pad():
    # tf.image.rot90's docstring: [[1], [2]], [[3], [4]] turns to [[2, 4], [1, 3]]
    a = np.array([[[1], [2]], [[3], [4]]])
    np.testing.assert_array_equal(gt.image.rot90(a).numpy()[..., 0], [[2, 4], [1, 3]])
    batch = np.arange(2 * 3 * 4 * 1).reshape(2, 3, 4, 1)
    for k in range(-1, 5):
        np.testing.assert_array_equal(gt.image.rot90(batch, k).numpy(),
                                      np.rot90(batch, k, axes=(1, 2)))
    np.testing.assert_array_equal(gt.image.transpose(batch).numpy(),
                                  batch.transpose(0, 2, 1, 3))
    # central_crop of 5 x 7 at 0.5: starts int(1.25) = 1 and int(1.75) = 1
    image = np.arange(5 * 7).reshape(5, 7, 1)
    np.testing.assert_array_equal(gt.image.central_crop(image, 0.5).numpy(), image[1:4, 1:6])
    with pytest.raises(ValueError, match="central_fraction"):
        gt.image.central_crop(image, 0.0)
    # crop the height 3 -> 2 from row 0 (3 // 2 - ... = 0), pad the width 4 -> 7 by 1
    out = gt.image.resize_with_crop_or_pad(batch, 2, 7).numpy()
    expected = np.pad(batch[:, 0:2], [(0, 0), (0, 0), (1, 2), (0, 0)])
    np.testing.assert_array_equal(out, expected)
    check_grads(lambda t: gt.image.resize_with_crop_or_pad(gt.image.rot90(t, 3), 3, 5),
                [RNG.standard_normal((4, 3, 2))], order=2)
