"""Keras 3's recurrent layers: the cells (``cells.py``), ``RNN`` and ``StackedRNNCells``
(``rnn.py``) with their time loop on ``gt.foldl``/``gt.scan`` (``time_loop.py``),
``SimpleRNN``/``GRU``/``LSTM`` (``layers.py``), ``Bidirectional`` and
``TimeDistributed`` (``wrappers.py``)."""

from .cells import GRUCell, LSTMCell, SimpleRNNCell
from .layers import GRU, LSTM, SimpleRNN
from .rnn import RNN, StackedRNNCells
from .wrappers import Bidirectional, TimeDistributed

__all__ = ["GRU", "LSTM", "RNN", "Bidirectional", "GRUCell", "LSTMCell", "SimpleRNN",
           "SimpleRNNCell", "StackedRNNCells", "TimeDistributed"]
