# TF's "Text generation with an RNN" (tensorflow/text, docs/tutorials/
# text_generation.ipynb), its code cells in order with the import changed to gradtape.
# Replaced, as gradtape has no string tensors (no tf.strings, StringLookup, RaggedTensor,
# SparseTensor or tf.saved_model; see docs/porting.md): the downloaded Shakespeare by a
# short synthetic play; `tf.strings.unicode_split` + `StringLookup` (and its inverse) by
# the NumPy `CharLookup` below, with StringLookup's vocabulary ("[UNK]" first);
# OneStep's SparseTensor mask by the same mask built densely; OneStep converts strings
# to ids outside its `@tf.function` (ids in, ids out), and the saved_model cells are
# dropped. Sizes: seq_length 100 -> 20, BATCH_SIZE 64 -> 8, embedding_dim 256 -> 16,
# rnn_units 1024 -> 32, EPOCHS 20 -> 1 (and 10 -> 1), 1000 generated chars -> 5. The
# model (`super().__init__(self)`, `get_initial_state(x)`), the tf.data pipeline,
# compile/fit with ModelCheckpoint, the sampling and CustomTraining's tape step are as
# written.
import os
import tempfile
import time

import numpy as np

import gradtape as tf


class CharLookup:
    """StringLookup(vocabulary=..., mask_token=None[, invert=True]) on NumPy arrays of
    one-character strings: id 0 is "[UNK]", as Keras's."""

    def __init__(self, vocabulary, invert=False):
        self.vocabulary = ["[UNK]"] + [v for v in vocabulary if v != "[UNK]"]
        self.invert = invert
        self.index = {c: i for i, c in enumerate(self.vocabulary)}

    def get_vocabulary(self):
        return list(self.vocabulary)

    def __call__(self, values):
        values = np.asarray(values)
        if self.invert:
            return np.asarray(self.vocabulary, dtype=object)[values]
        return np.vectorize(lambda c: self.index.get(c, 0), otypes=[np.int64])(values)


def unicode_split(text):
    return np.array(list(text), dtype=object)


text = ("ROMEO:\nWhat light through yonder window breaks?\n\n"
        "JULIET:\nO Romeo, Romeo, wherefore art thou Romeo?\n\n") * 6
print(f'Length of text: {len(text)} characters')

# The unique characters in the file
vocab = sorted(set(text))
print(f'{len(vocab)} unique characters')

ids_from_chars = CharLookup(vocabulary=list(vocab))
chars_from_ids = CharLookup(vocabulary=ids_from_chars.get_vocabulary(), invert=True)

def text_from_ids(ids):
  return "".join(chars_from_ids(ids))

all_ids = ids_from_chars(unicode_split(text))

ids_dataset = tf.data.Dataset.from_tensor_slices(all_ids)

for ids in ids_dataset.take(10):
    print(chars_from_ids(ids.numpy()))

seq_length = 20

sequences = ids_dataset.batch(seq_length+1, drop_remainder=True)

for seq in sequences.take(1):
  print(chars_from_ids(seq.numpy()))

def split_input_target(sequence):
    input_text = sequence[:-1]
    target_text = sequence[1:]
    return input_text, target_text

split_input_target(list("Tensorflow"))

dataset = sequences.map(split_input_target)

for input_example, target_example in dataset.take(1):
    print("Input :", text_from_ids(input_example.numpy()))
    print("Target:", text_from_ids(target_example.numpy()))

# Batch size
BATCH_SIZE = 8

# Buffer size to shuffle the dataset
# (TF data is designed to work with possibly infinite sequences,
# so it doesn't attempt to shuffle the entire sequence in memory. Instead,
# it maintains a buffer in which it shuffles elements).
BUFFER_SIZE = 10000

dataset = (
    dataset
    .shuffle(BUFFER_SIZE)
    .batch(BATCH_SIZE, drop_remainder=True)
    .prefetch(tf.data.experimental.AUTOTUNE))

dataset

# Length of the vocabulary in chars
vocab_size = len(vocab)

# The embedding dimension
embedding_dim = 16

# Number of RNN units
rnn_units = 32

class MyModel(tf.keras.Model):
  def __init__(self, vocab_size, embedding_dim, rnn_units):
    super().__init__(self)
    self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
    self.gru = tf.keras.layers.GRU(rnn_units,
                                   return_sequences=True,
                                   return_state=True)
    self.dense = tf.keras.layers.Dense(vocab_size)

  def call(self, inputs, states=None, return_state=False, training=False):
    x = inputs
    x = self.embedding(x, training=training)
    if states is None:
      states = self.gru.get_initial_state(x)
    x, states = self.gru(x, initial_state=states, training=training)
    x = self.dense(x, training=training)

    if return_state:
      return x, states
    else:
      return x

model = MyModel(
    # Be sure the vocabulary size matches the `StringLookup` layers.
    vocab_size=len(ids_from_chars.get_vocabulary()),
    embedding_dim=embedding_dim,
    rnn_units=rnn_units)

for input_example_batch, target_example_batch in dataset.take(1):
    example_batch_predictions = model(input_example_batch)
    print(example_batch_predictions.shape, "# (batch_size, sequence_length, vocab_size)")

model.summary()

sampled_indices = tf.random.categorical(example_batch_predictions[0], num_samples=1)
sampled_indices = tf.squeeze(sampled_indices, axis=-1).numpy()

sampled_indices

print("Input:\n", text_from_ids(input_example_batch[0].numpy()))
print()
print("Next Char Predictions:\n", text_from_ids(sampled_indices))

loss = tf.losses.SparseCategoricalCrossentropy(from_logits=True)

example_batch_loss = loss(target_example_batch, example_batch_predictions)
mean_loss = example_batch_loss.numpy().mean()
print("Prediction shape: ", example_batch_predictions.shape, " # (batch_size, sequence_length, vocab_size)")
print("Mean loss:        ", mean_loss)

tf.exp(mean_loss).numpy()

model.compile(optimizer='adam', loss=loss)

# Directory where the checkpoints will be saved
checkpoint_dir = tempfile.mkdtemp()
# Name of the checkpoint files
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch}")

checkpoint_callback = tf.keras.callbacks.ModelCheckpoint(
    filepath=checkpoint_prefix,
    save_weights_only=True)

EPOCHS = 1

history = model.fit(dataset, epochs=EPOCHS, callbacks=[checkpoint_callback])

class OneStep(tf.keras.Model):
  def __init__(self, model, chars_from_ids, ids_from_chars, temperature=1.0):
    super().__init__()
    self.temperature = temperature
    self.model = model
    self.chars_from_ids = chars_from_ids
    self.ids_from_chars = ids_from_chars

    # Create a mask to prevent "" or "[UNK]" from being generated.
    skip_ids = self.ids_from_chars(['', '[UNK]'])[:, None]
    dense_mask = np.zeros([len(ids_from_chars.get_vocabulary())], np.float32)
    # Put a -inf at each bad index.
    dense_mask[skip_ids[:, 0]] = -float('inf')
    self.prediction_mask = tf.constant(dense_mask)

  @tf.function
  def generate_one_step(self, input_ids, states=None):
    # Run the model.
    # predicted_logits.shape is [batch, char, next_char_logits]
    predicted_logits, states = self.model(inputs=input_ids, states=states,
                                          return_state=True)
    # Only use the last prediction.
    predicted_logits = predicted_logits[:, -1, :]
    predicted_logits = predicted_logits/self.temperature
    # Apply the prediction mask: prevent "" or "[UNK]" from being generated.
    predicted_logits = predicted_logits + self.prediction_mask

    # Sample the output logits to generate token IDs.
    predicted_ids = tf.random.categorical(predicted_logits, num_samples=1)
    predicted_ids = tf.squeeze(predicted_ids, axis=-1)

    # Return the token ids and model state.
    return predicted_ids, states

one_step_model = OneStep(model, chars_from_ids, ids_from_chars)

start = time.time()
states = None
next_char = np.array(['ROMEO:'], dtype=object)
result = [next_char]

for n in range(5):
  input_ids = np.stack([ids_from_chars(unicode_split(s)) for s in next_char])
  next_ids, states = one_step_model.generate_one_step(input_ids, states=states)
  next_char = chars_from_ids(next_ids.numpy())
  result.append(next_char)

result = ["".join(parts) for parts in zip(*result)]
end = time.time()
print(result[0], '\n\n' + '_'*80)
print('\nRun time:', end - start)
generated = result[0]  # added: what the test reads

class CustomTraining(MyModel):
  @tf.function
  def train_step(self, inputs):
      inputs, labels = inputs
      with tf.GradientTape() as tape:
          predictions = self(inputs, training=True)
          loss = self.loss(labels, predictions)
      grads = tape.gradient(loss, model.trainable_variables)
      self.optimizer.apply_gradients(zip(grads, model.trainable_variables))

      return {'loss': loss}

model = CustomTraining(
    vocab_size=len(ids_from_chars.get_vocabulary()),
    embedding_dim=embedding_dim,
    rnn_units=rnn_units)

model.compile(optimizer = tf.keras.optimizers.Adam(),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))

model.fit(dataset, epochs=1)

EPOCHS = 1
custom_losses = []  # added: what the test reads

mean = tf.metrics.Mean()

for epoch in range(EPOCHS):
    start = time.time()

    mean.reset_states()
    for (batch_n, (inp, target)) in enumerate(dataset):
        logs = model.train_step([inp, target])
        mean.update_state(logs['loss'])
        custom_losses.append(float(logs['loss']))

        if batch_n % 50 == 0:
            template = f"Epoch {epoch+1} Batch {batch_n} Loss {logs['loss']:.4f}"
            print(template)

    # saving (checkpoint) the model every 5 epochs
    if (epoch + 1) % 5 == 0:
        model.save_weights(checkpoint_prefix.format(epoch=epoch))

    print()
    print(f'Epoch {epoch+1} Loss: {mean.result().numpy():.4f}')
    print(f'Time taken for 1 epoch {time.time() - start:.2f} sec')
    print("_"*80)

model.save_weights(checkpoint_prefix.format(epoch=epoch))
