# TF's "Adversarial example using FGSM" (tensorflow/docs,
# site/en/tutorials/generative/adversarial_fgsm.ipynb), its code cells in order with the
# import changed to gradtape. Replaced, as no NumPy library could be expected to have
# them: the pretrained `tf.keras.applications.MobileNetV2` (ImageNet weights) by a small
# untrained Keras classifier with the same input and 1000-way softmax output,
# `mobilenet_v2.preprocess_input` and `decode_predictions` by their formulas
# (x / 127.5 - 1; the top class), the downloaded JPEG by a synthetic 180x240 RGB image;
# the matplotlib plots are dropped. `create_adversarial_pattern` and the epsilon loop are
# as written.
import numpy as np

import gradtape as tf


def _stand_in_mobilenet_v2():
    inputs = tf.keras.Input(shape=(224, 224, 3))
    x = tf.keras.layers.AveragePooling2D(8)(inputs)
    x = tf.keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    outputs = tf.keras.layers.Dense(1000, activation="softmax")(x)
    return tf.keras.Model(inputs, outputs)


def _preprocess_input(image):
    return image / 127.5 - 1.0


def _decode_predictions(probs, top=1):
    index = int(np.argmax(probs[0]))
    return [[(f"n{index:08d}", f"class_{index}", float(probs[0][index]))]]


pretrained_model = _stand_in_mobilenet_v2()
pretrained_model.trainable = False

# ImageNet labels
decode_predictions = _decode_predictions

# Helper function to preprocess the image so that it can be inputted in MobileNetV2
def preprocess(image):
  image = tf.cast(image, tf.float32)
  image = tf.image.resize(image, (224, 224))
  image = _preprocess_input(image)
  image = image[None, ...]
  return image

# Helper function to extract labels from probability vector
def get_imagenet_label(probs):
  return decode_predictions(probs, top=1)[0][0]

image = np.random.default_rng(0).integers(0, 256, (180, 240, 3)).astype(np.uint8)

image = preprocess(image)
image_probs = pretrained_model.predict(image)

_, image_class, class_confidence = get_imagenet_label(image_probs)
print('{} : {:.2f}% Confidence'.format(image_class, class_confidence*100))

loss_object = tf.keras.losses.CategoricalCrossentropy()

def create_adversarial_pattern(input_image, input_label):
  with tf.GradientTape() as tape:
    tape.watch(input_image)
    prediction = pretrained_model(input_image)
    loss = loss_object(input_label, prediction)

  # Get the gradients of the loss w.r.t to the input image.
  gradient = tape.gradient(loss, input_image)
  # Get the sign of the gradients to create the perturbation
  signed_grad = tf.sign(gradient)
  return signed_grad

# Get the input label of the image.
labrador_retriever_index = 208
label = tf.one_hot(labrador_retriever_index, image_probs.shape[-1])
label = tf.reshape(label, (1, image_probs.shape[-1]))

perturbations = create_adversarial_pattern(image, label)

def display_images(image, description):
  _, label, confidence = get_imagenet_label(pretrained_model.predict(image))
  print('{} \n {} : {:.2f}% Confidence'.format(description,
                                               label, confidence*100))

epsilons = [0, 0.01, 0.1, 0.15]
descriptions = [('Epsilon = {:0.3f}'.format(eps) if eps else 'Input')
                for eps in epsilons]

for i, eps in enumerate(epsilons):
  adv_x = image + eps*perturbations
  adv_x = tf.clip_by_value(adv_x, -1, 1)
  display_images(adv_x, descriptions[i])
