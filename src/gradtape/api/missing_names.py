"""TF's and Keras's public names that gradtape does not have, with what to use instead.

The public namespaces (``gt``, ``gt.keras``, ``gt.keras.layers``, ``gt.nn``...) get a
module ``__getattr__`` (``install``): a name of TF 2.21's or Keras 3's API there raises an
``AttributeError`` that says gradtape lacks it and names the substitute, or the porting
guide's table; any other name raises Python's ordinary ``AttributeError``. Only missing
names reach ``__getattr__``, so ``dir()`` and ``hasattr`` are unchanged, and a name
gradtape gains later simply stops being looked up here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.namespaces import AttributeNamespace

__all__ = ["install", "missing_attribute", "missing_name_error"]

_GUIDE = ("see \"TF names gradtape does not have yet\" in the porting guide "
          "(docs/porting.md)")
_CHECKPOINT = ("use model.save_weights(path) / model.load_weights(path) or "
               "gt.train.Checkpoint(model=model) (gradtape's checkpoint files; the "
               "architecture stays in your code)")
_CUSTOM_LAYER = ("write a keras.layers.Layer subclass whose call uses gt.nn / gt.linalg "
                 "ops")
_NO_DEVICES = "none is needed: gradtape runs on the CPU, in one process"
_LOGGING = "log loss.numpy() with Python's logging or print"
_DENSE = "use dense tensors with padding and masks (gt.boolean_mask, gt.where)"


def _names(text: str, hint: str = "") -> dict[str, str]:
    return dict.fromkeys(text.split(), hint)


# tf.<name>: TF 2.21's top-level modules, functions and classes.
_TF: dict[str, str] = {
    **_names("audio bitwise compat distribute feature_column graph_util lite lookup mlir "
             "quantization queue raw_ops sets strings sysconfig test tpu version xla "
             "experimental io"),
    "summary": _LOGGING + "; `python -m gradtape inspect` shows what a step compiled",
    "profiler": "use Python's cProfile; `python -m gradtape inspect` shows what a step "
                "compiled",
    "saved_model": _CHECKPOINT,
    "sparse": _DENSE, "SparseTensor": _DENSE, "SparseTensorSpec": _DENSE,
    "ragged": _DENSE, "RaggedTensor": _DENSE, "RaggedTensorSpec": _DENSE,
    "IndexedSlices": "gradients of gathers are dense tensors in gradtape",
    "bfloat16": "use float32 (NumPy has no bfloat16)",
    **_names("qint8 quint8 qint16 quint16 qint32 resource variant",
             "gradtape's dtypes are NumPy's: see gt.dtypes"),
    "Graph": "gt.function traces to gradtape's IR: f.get_forward_ir(x), f.get_source(x)",
    "Operation": "gt.function traces to gradtape's IR: f.get_forward_ir(x)",
    "gradients": "use gt.GradientTape (tape.gradient)",
    "hessians": "use gt.hessian or nested gt.GradientTape",
    "control_dependencies": "not needed: gradtape runs eagerly, in program order",
    "group": "not needed: gradtape runs eagerly, in program order",
    "no_op": "not needed: gradtape runs eagerly",
    "DeviceSpec": _NO_DEVICES,
    "VariableAggregation": _NO_DEVICES, "VariableSynchronization": _NO_DEVICES,
    **_names("approx_top_k as_string batch_to_space bitcast broadcast_dynamic_shape "
             "broadcast_static_shape complex conv conv2d_backprop_filter_v2 "
             "conv2d_backprop_input_v2 dynamic_partition dynamic_stitch edit_distance eig "
             "eigvals ensure_shape extract_volume_patches fftnd fingerprint "
             "get_current_name_scope get_logger grad_pass_through guarantee_const "
             "histogram_fixed_width histogram_fixed_width_bins identity_n ifftnd "
             "import_graph_def inside_function irfftnd is_symbolic_tensor load_library "
             "load_op_library make_ndarray make_tensor_proto matrix_square_root "
             "no_gradient nondifferentiable_batch_function parallel_stack "
             "random_index_shuffle realdiv "
             "register_tensor_conversion_function required_space_to_batch_paddings "
             "reverse_sequence rfftnd saturate_cast scalar_mul sequence_mask shape_n "
             "slice space_to_batch space_to_batch_nd strided_slice timestamp truediv "
             "truncatediv tuple type_spec_from_value unravel_index variable_creator_scope "
             "AggregationMethod CriticalSection OptionalSpec RegisterGradient "
             "TensorArraySpec TypeSpec newaxis assert_equal assert_greater assert_less "
             "assert_rank reduce_all reduce_any "
             "constant_initializer ones_initializer zeros_initializer "
             "random_normal_initializer random_uniform_initializer "
             "glorot_uniform_initializer metrics losses initializers"),
}

# tf.keras.<name> (Keras 3's top level) and tf.keras.<module>.<name>.
_KERAS: dict[str, str] = {
    **_names("InputSpec Loss Metric Operation Optimizer Quantizer Regularizer "
             "StatelessScope applications config constraints datasets device distribution "
             "dtype_policies export legacy mixed_precision name_scope ops preprocessing "
             "quantizers random tree version visualization wrappers"),
    "saving": _CHECKPOINT,
}
_KERAS_MODULES: dict[str, str] = {
    "layers": "AdditiveAttention AlphaDropout Attention Average AveragePooling1D "
              "AveragePooling2D AveragePooling3D AvgPool1D AvgPool2D AvgPool3D Bidirectional "
              "CategoryEncoding CenterCrop Conv1D Conv1DTranspose Conv2D Conv2DTranspose "
              "Conv3D Conv3DTranspose ConvLSTM1D ConvLSTM2D ConvLSTM3D Convolution1D "
              "Convolution2D Convolution3D Cropping1D Cropping2D Cropping3D "
              "Discretization Dot ELU EinsumDense FlaxLayer "
              "GRU GRUCell GaussianDropout GaussianNoise GlobalAveragePooling1D "
              "GlobalAveragePooling2D GlobalAveragePooling3D GlobalAvgPool1D "
              "GlobalAvgPool2D GlobalAvgPool3D GlobalMaxPool1D GlobalMaxPool2D "
              "GlobalMaxPool3D GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D "
              "GroupNormalization GroupQueryAttention HashedCrossing Hashing Identity Input "
              "InputSpec IntegerLookup JaxLayer LSTM LSTMCell LayerNormalization LeakyReLU "
              "Masking MaxPool1D MaxPool2D MaxPool3D MaxPooling1D MaxPooling2D "
              "MaxPooling3D Maximum MelSpectrogram Minimum MultiHeadAttention Multiply "
              "Normalization PReLU Permute RNN RandomBrightness RandomContrast RandomCrop "
              "RandomFlip RandomHeight RandomRotation RandomTranslation RandomWidth "
              "RandomZoom ReLU RepeatVector Rescaling Reshape Resizing SeparableConv1D "
              "SeparableConv2D SimpleRNN SimpleRNNCell Softmax SpatialDropout1D "
              "SpatialDropout2D SpatialDropout3D SpectralNormalization StackedRNNCells "
              "StringLookup Subtract TFSMLayer TextVectorization TimeDistributed "
              "TorchModuleWrapper UnitNormalization UpSampling1D UpSampling2D UpSampling3D "
              "Wrapper ZeroPadding1D ZeroPadding2D ZeroPadding3D add average concatenate "
              "dot maximum minimum multiply subtract deserialize serialize",
    "losses": "BinaryFocalCrossentropy CategoricalFocalCrossentropy CategoricalHinge "
              "CosineSimilarity Dice Hinge Huber KLDivergence LogCosh "
              "MeanAbsolutePercentageError MeanSquaredLogarithmicError Poisson "
              "SquaredHinge Tversky binary_focal_crossentropy categorical_hinge "
              "cosine_similarity hinge huber kl_divergence log_cosh poisson squared_hinge "
              "deserialize serialize",
    "metrics": "AUC BinaryCrossentropy BinaryIoU CategoricalCrossentropy CategoricalHinge "
               "CosineSimilarity F1Score FBetaScore FalseNegatives FalsePositives Hinge IoU "
               "KLDivergence LogCoshError MeanIoU MeanAbsolutePercentageError "
               "MeanSquaredLogarithmicError OneHotIoU OneHotMeanIoU Poisson Precision "
               "PrecisionAtRecall R2Score Recall RecallAtPrecision RootMeanSquaredError "
               "SensitivityAtSpecificity SparseCategoricalCrossentropy "
               "SparseTopKCategoricalAccuracy SpecificityAtSensitivity SquaredHinge Sum "
               "TopKCategoricalAccuracy TrueNegatives TruePositives",
    "optimizers": "Adadelta Adafactor AdamW Adamax Ftrl Lamb Lion LossScaleOptimizer "
                  "Muon Nadam deserialize get serialize legacy",
    "callbacks": "BackupAndRestore RemoteMonitor SwapEMAWeights TensorBoard",
    "utils": "FeatureSpace PyDataset Sequence array_to_img audio_dataset_from_directory "
             "custom_object_scope get_custom_objects get_file get_registered_name "
             "get_registered_object image_dataset_from_directory img_to_array load_img "
             "normalize pad_sequences plot_model register_keras_serializable save_img "
             "serialize_keras_object deserialize_keras_object split_dataset "
             "text_dataset_from_directory timeseries_dataset_from_array to_categorical "
             "model_to_dot",
    "models": "clone_model load_model model_from_json save_model",
    "backend": "backend epsilon floatx image_data_format is_float_dtype is_int_dtype "
               "is_keras_tensor result_type set_epsilon set_floatx "
               "set_image_data_format standardize_dtype",
}
_KERAS_HINTS: dict[str, str] = {
    "layers.Input": "use keras.Input(shape=...)",
    "callbacks.TensorBoard": _LOGGING,
    "models.load_model": _CHECKPOINT, "models.save_model": _CHECKPOINT,
    "utils.to_categorical": "use gt.one_hot(labels, depth) (or np.eye(depth)[labels])",
    "utils.PyDataset": "pass NumPy arrays to model.fit",
    "utils.Sequence": "pass NumPy arrays to model.fit",
}

# tf.nn, tf.math, tf.linalg, tf.random: the common names gradtape lacks.
_SUBMODULES: dict[str, str] = {
    "nn": "atrous_conv2d batch_normalization "
          "compute_average_loss crelu ctc_loss "
          "dilation2d erosion2d fractional_avg_pool fractional_max_pool "
          "isotonic_regression local_response_normalization log_poisson_loss "
          "nce_loss normalize_moments "
          "safe_embedding_lookup_sparse sampled_softmax_loss scale_regularization_loss "
          "sufficient_statistics weighted_cross_entropy_with_logits "
          "weighted_moments with_space_to_batch zero_fraction batch_norm_with_global_normalization "
          "embedding_lookup_sparse in_top_k",
    "math": "accumulate_n bessel_i0 bessel_i0e bessel_i1 bessel_i1e betainc bincount "
            "confusion_matrix count_nonzero cumulative_logsumexp digamma divide_no_nan "
            "erf erfc erfcinv erfinv igamma igammac in_top_k invert_permutation is_finite "
            "is_inf is_nan is_non_decreasing is_strictly_increasing l2_normalize lbeta "
            "lgamma log_sigmoid mod multiply_no_nan ndtri nextafter polygamma polyval "
            "reduce_all reduce_any reduce_euclidean_norm scalar_mul segment_max "
            "segment_mean segment_min segment_prod segment_sum sobol_sample squared_difference "
            "top_k truediv unsorted_segment_max unsorted_segment_mean unsorted_segment_min "
            "unsorted_segment_prod unsorted_segment_sqrt_n unsorted_segment_sum xdivy xlog1py "
            "xlogy zero_fraction zeta",
    "linalg": "LinearOperator LinearOperatorDiag LinearOperatorFullMatrix "
              "LinearOperatorIdentity LinearOperatorLowerTriangular adjoint "
              "banded_triangular_solve "
              "cholesky_solve cross eig eigvals expm global_norm logm lstsq lu lu_matrix_inverse "
              "lu_reconstruct lu_solve matrix_rank normalize pinv qr sqrtm tensor_diag "
              "tensor_diag_part tensordot tridiagonal_matmul tridiagonal_solve",
    "train": "BytesList CheckpointManager CheckpointOptions ClusterDef ClusterSpec "
             "Coordinator Example ExponentialMovingAverage Feature FeatureList FeatureLists "
             "Features FloatList Int64List JobDef SequenceExample ServerDef TrackableView "
             "checkpoints_iterator get_checkpoint_state experimental",
    "dtypes": "bfloat16 qint8 quint8 qint16 quint16 qint32 resource variant "
              "experimental saturate_cast",
    "debugging": "assert_all_finite assert_shapes assert_type check_numerics "
                 "disable_check_numerics enable_check_numerics experimental "
                 "get_log_device_placement is_numeric_tensor set_log_device_placement",
    "random": "Algorithm Generator all_candidate_sampler create_rng_state "
              "experimental fixed_unigram_candidate_sampler fold_in gamma "
              "get_global_generator learned_unigram_candidate_sampler "
              "log_uniform_candidate_sampler poisson set_global_generator split "
              "stateless_binomial stateless_categorical stateless_gamma "
              "stateless_normal stateless_parameterized_truncated_normal stateless_poisson "
              "stateless_truncated_normal stateless_uniform uniform_candidate_sampler",
    "image": "adjust_brightness adjust_contrast adjust_gamma adjust_hue adjust_jpeg_quality "
             "adjust_saturation combined_non_max_suppression convert_image_dtype "
             "crop_and_resize decode_image decode_jpeg decode_png draw_bounding_boxes "
             "encode_jpeg encode_png extract_glimpse extract_patches grayscale_to_rgb "
             "hsv_to_rgb image_gradients non_max_suppression psnr random_brightness "
             "random_contrast random_crop random_hue random_saturation "
             "resize_with_pad rgb_to_grayscale rgb_to_hsv sobel_edges ssim "
             "total_variation",
}
_SUBMODULE_HINTS: dict[str, str] = {
    "random.poisson": "use np.random.default_rng(seed).poisson(...) wrapped in "
                      "gt.constant (no gradient)",
    "random.gamma": "use np.random.default_rng(seed).gamma(...) wrapped in gt.constant "
                    "(no gradient)",
    "random.Generator": "use gt.random.set_seed and gt.random's functions",
    "train.CheckpointManager": "use gt.train.Checkpoint(...).save(prefix) (numbered saves "
                               "and the `checkpoint` state file) with "
                               "gt.train.latest_checkpoint(directory), and delete old "
                               "saves yourself",
    "dtypes.bfloat16": "use float32 (NumPy has no bfloat16)",
}

# Attributes of Keras layers and models that gradtape's lack.
_LAYER_ATTRIBUTES: dict[str, str] = {
    **_names("export get_compile_config compile_from_config get_build_config "
             "build_from_config quantize stateless_call symbolic_call from_config "
             "to_json get_state_tree set_state_tree save_own_variables load_own_variables "
             "compute_mask supports_masking input_spec dtype_policy"),
    "save": _CHECKPOINT,
}


def _table() -> dict[str, str]:
    table = {f"tf.{name}": hint for name, hint in _TF.items()}
    table.update({f"tf.keras.{name}": hint for name, hint in _KERAS.items()})
    for module, names in _KERAS_MODULES.items():
        table.update({f"tf.keras.{module}.{name}": _KERAS_HINTS.get(f"{module}.{name}", "")
                      for name in names.split()})
    for module, names in _SUBMODULES.items():
        table.update({f"tf.{module}.{name}": _SUBMODULE_HINTS.get(f"{module}.{name}", "")
                      for name in names.split()})
    return table


MISSING: dict[str, str] = _table()


def missing_name_error(owner: str, tf_path: str, name: str) -> AttributeError:
    """The ``AttributeError`` for ``owner.name`` (``owner`` as Python names it, e.g.
    "module 'gradtape.keras'"): TF's or Keras's name ``tf_path.name`` said to be missing,
    with its substitute; Python's message for a name TF does not have."""
    hint = MISSING.get(f"{tf_path}.{name}")
    plain = f"{owner} has no attribute {name!r}"
    if hint is None:
        return AttributeError(plain)
    whose = "Keras's" if tf_path.startswith("tf.keras") else "TensorFlow's"
    return AttributeError(f"{plain}: `{tf_path}.{name}` is {whose}, and gradtape does not "
                          f"have it; {hint or _GUIDE}.")


def missing_attribute(cls_name: str, name: str) -> AttributeError:
    """The ``AttributeError`` for a Keras layer's or model's attribute ``name``."""
    hint = _LAYER_ATTRIBUTES.get(name)
    plain = f"{cls_name!r} object has no attribute {name!r}"
    if hint is None:
        return AttributeError(plain)
    return AttributeError(f"{plain}: Keras's `{name}` is not part of gradtape's layers "
                          f"and models; {hint or _GUIDE}.")


def _module_getattr(module_name: str, tf_path: str) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        raise missing_name_error(f"module {module_name!r}", tf_path, name)

    return __getattr__


_ATTRIBUTE_NAMESPACES: dict[int, str] = {}  # id of a gt.train-like namespace -> TF path


def _explain_attribute_namespace(namespace: Any, name: str) -> AttributeError:
    tf_path = _ATTRIBUTE_NAMESPACES.get(id(namespace))
    if tf_path is None:
        return AttributeError(f"'namespace' object has no attribute {name!r}")
    return missing_name_error(f"namespace {tf_path.replace('tf.', 'gt.', 1)!r}", tf_path,
                              name)


def install(namespaces: dict[str, Any]) -> None:
    """Give each namespace (by its TF path: ``"tf"``, ``"tf.keras.layers"``...) the
    ``__getattr__`` that explains a missing TF name: a module's own, or the one
    ``AttributeNamespace``s share (``gt.train``, ``gt.dtypes``...)."""
    for tf_path, space in namespaces.items():
        if isinstance(space, AttributeNamespace):
            _ATTRIBUTE_NAMESPACES[id(space)] = tf_path
        else:
            space.__getattr__ = _module_getattr(space.__name__, tf_path)
    AttributeNamespace._explain_missing = _explain_attribute_namespace
