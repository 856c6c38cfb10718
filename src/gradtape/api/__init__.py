"""The TF surface: the modules behind TF's public names, built on everything below.

    math, math_special  gt.math (and gt.math.special): TF's tf.math names over the ops
    nn                  gt.nn: TF's tf.nn names (dropout, drawn from gt.random's streams)
    random              gt.random: TF's tf.random functions and Generator
    creation            gt.zeros, gt.range, gt.eye...: TF's tensor-creating functions
    array_ops           top_k, searchsorted, unique, bincount, band_part, meshgrid...
    segment_ops         segment reductions and the scatter_nd family
    diag_ops            tf.linalg.diag and set_diag
    control_flow        cond, case, while_loop, map_fn, scan, foldl, foldr...
    control_flow_traced the same inside @gt.function: one loop or switch equation
    tensor_array        gt.TensorArray
    transforms          grad, jacobian, hessian, jvp, vjp, value_and_grad
    module              gt.Module and gt.name_scope
    checkpoint          gt.train: Checkpoint, CheckpointManager (checkpoint_files and
                        checkpoint_state: the files and the state file)
    debugging           gt.debugging's assertions and gt.nest
    eager               executing_eagerly, get_static_value
    testing             check_grads, check_vjp (public as gradtape.testing)

Imports: everything below it (core, ir, ops, passes, codegen, ad, compiler, tape,
functions, data, scipy, optimizers). Above it stand keras/, cli/ and the package root
(checkpoint.py saves an optimizer's slots, so optimizers/ stands below).
"""
