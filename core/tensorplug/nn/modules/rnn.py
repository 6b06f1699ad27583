"""Recurrent layers: ``RNN`` (tanh or relu), ``LSTM`` (with ``proj_size``), ``GRU`` and their cells, as
``torch.nn``'s: the same parameter names, shapes, gate order (LSTM i, f, g, o; GRU r, z, n) and
initialization, so a PyTorch state_dict loads.

Each layer and direction projects the inputs of every time step with one GEMM first. The LSTM's
and GRU's recurrences are then one operator each (``_lstm_scan``, ``_gru_scan``: per step one GEMM and
the gates, a numpy loop on the CPU, with its own backward); RNN and the projected LSTM run their steps as
tensor ops.
"""

from __future__ import annotations

import math
import numbers
import warnings

import tensorplug as _tp

from ...ops.factories import empty
from ...ops.nn_extra import gru_scan as _gru_scan, lstm_scan as _lstm_scan
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """The parameters and checks the recurrent layers share (PyTorch's ``RNNBase``)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_in = input_size if layer == 0 else real * dirs
                sfx = "_reverse" if direction == 1 else ""
                params = [("weight_ih", (gate_size, layer_in)), ("weight_hh", (gate_size, real))]
                if bias:
                    params += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    params.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in params:
                    name = f"{base}_l{layer}{sfx}"
                    setattr(self, name, Parameter(empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Nothing to do: the weights are used as they are (PyTorch compacts them for cuDNN)."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    # -- forward helpers
    def _check_input(self, input):
        w = getattr(self, self._flat_weights_names[0])
        if input._dtype is not w._dtype:
            raise ValueError(f"RNN input dtype ({_tp_name(input._dtype)}) does not match weight dtype "
                             f"({_tp_name(w._dtype)}). Convert input: input.to({_tp_name(w._dtype)}), or convert "
                             f"model: model.to({_tp_name(input._dtype)})")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input._shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input._shape[-1]}")

    def _expected_hidden(self, input, size):
        batch = input._shape[0] if self.batch_first else input._shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx._shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx._shape)))

    def _prepare(self, input, hx, name):
        """Unbatched inputs get a batch dim; the batch goes to dim 1. Returns (input, hx, batched)."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, batched

    def _layers(self, x, hs, step):
        """Run every layer and direction over ``x`` (T, B, I); ``hs[k]`` is the initial state of layer-direction
        k (a tuple for LSTM); ``step(x, state, weights, reverse)`` returns (outputs (T, B, H), final state)."""
        dirs = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                weights = [getattr(self, n) for n in self._all_weights[k]]
                out, final = step(x, hs[k], weights, d == 1)
                outs.append(out)
                finals.append(final)
            x = outs[0] if dirs == 1 else _tp.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _split(self, weights):
        if self.bias:
            w_ih, w_hh, b_ih, b_hh = weights[:4]
            rest = weights[4:]
        else:
            (w_ih, w_hh), b_ih, b_hh, rest = weights[:2], None, None, weights[2:]
        return w_ih, w_hh, b_ih, b_hh, (rest[0] if rest else None)


def _tp_name(dtype):
    return str(dtype)


def _both_biases(b_ih, b_hh):
    """The input projection's bias: ``b_ih + b_hh`` when both exist (added once to the small vector, not
    to every step's projection; autograd hands each bias the same gradient)."""
    if b_hh is None:
        return b_ih
    return b_hh if b_ih is None else b_ih + b_hh


def _steps(x, reverse):
    n = x._shape[0]
    return range(n - 1, -1, -1) if reverse else range(n)


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity='relu'``: relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; ``forward(input, hx=None)`` returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def _step(self, x, h, weights, reverse):
        w_ih, w_hh, b_ih, b_hh, _ = self._split(weights)
        xw = F.linear(x, w_ih, _both_biases(b_ih, b_hh))
        act = _tp.tanh if self.nonlinearity == "tanh" else _tp.relu
        wt = w_hh.t()
        outs = [None] * x._shape[0]
        for t in _steps(x, reverse):
            h = act(xw[t] + h.matmul(wt))
            outs[t] = h
        return _tp.stack(outs), h

    def forward(self, input, hx=None):
        input, batched = self._prepare(input, hx, "RNN")
        if hx is not None:
            if not batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            if batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not batched:
                hx = hx.unsqueeze(1)
        x = input.transpose(0, 1) if self.batch_first else input
        self._check_input(input)
        exp = self._expected_hidden(input, self.hidden_size)
        if hx is None:
            hx = _tp.zeros(exp, dtype=input._dtype, device=input._device)
        self._check_hidden(hx, exp)
        out, finals = self._layers(x, [hx[k] for k in range(exp[0])], self._step)
        h_n = _tp.stack(finals)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n = out.squeeze(1 if not self.batch_first else 0), h_n.squeeze(1)
        return out, h_n


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o from x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh, c_t = f c_{t-1}
    + i g, h_t = o tanh(c_t) (``proj_size`` > 0: h_t = W_hr (o tanh(c_t))).

    ``forward(input, hx=None)`` (``hx = (h_0, c_0)``) returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _step(self, x, state, weights, reverse):
        h, c = state
        w_ih, w_hh, b_ih, b_hh, w_hr = self._split(weights)
        xw = F.linear(x, w_ih, _both_biases(b_ih, b_hh))  # every step's input projection: one GEMM
        if w_hr is None and x._shape[0] > 0:
            if reverse:
                xw = xw.flip(0)
            out, cells, _ = _lstm_scan(xw, h, c, w_hh)
            h_n, c_n = out[-1], cells[-1]
            return (out.flip(0) if reverse else out), (h_n, c_n)
        H = self.hidden_size
        wt = w_hh.t()
        outs = [None] * x._shape[0]
        for t in _steps(x, reverse):
            a = xw[t] + h.matmul(wt)
            i, f, g, o = a.narrow(1, 0, H).sigmoid(), a.narrow(1, H, H).sigmoid(), a.narrow(1, 2 * H, H).tanh(), \
                a.narrow(1, 3 * H, H).sigmoid()
            c = f * c + i * g
            h = o * c.tanh()
            if w_hr is not None:
                h = h.matmul(w_hr.t())
            outs[t] = h
        out = _tp.stack(outs) if outs else xw.narrow(2, 0, h._shape[-1])
        return out, (h, c)

    def forward(self, input, hx=None):
        input, batched = self._prepare(input, hx, "LSTM")
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is not None:
            if batched and (hx[0].dim() != 3 or hx[1].dim() != 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got ({hx[0].dim()}-D, "
                                   f"{hx[1].dim()}-D) tensors")
            if not batched:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self._check_input(input)
        exp_h = self._expected_hidden(input, real)
        exp_c = self._expected_hidden(input, self.hidden_size)
        if hx is None:
            hx = (_tp.zeros(exp_h, dtype=input._dtype, device=input._device),
                  _tp.zeros(exp_c, dtype=input._dtype, device=input._device))
        self._check_hidden(hx[0], exp_h, "Expected hidden[0] size {}, got {}")
        self._check_hidden(hx[1], exp_c, "Expected hidden[1] size {}, got {}")
        x = input.transpose(0, 1) if self.batch_first else input
        out, finals = self._layers(x, [(hx[0][k], hx[1][k]) for k in range(exp_h[0])], self._step)
        h_n = _tp.stack([f[0] for f in finals])
        c_n = _tp.stack([f[1] for f in finals])
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n, c_n = out.squeeze(0 if self.batch_first else 1), h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit: r, z = sigmoid(...), n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)),
    h_t = (1 - z) n + z h_{t-1}. ``forward(input, hx=None)`` returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def _step(self, x, h, weights, reverse):
        w_ih, w_hh, b_ih, b_hh, _ = self._split(weights)
        H = self.hidden_size
        xw = F.linear(x, w_ih, b_ih)
        if x._shape[0] > 0:
            if reverse:
                xw = xw.flip(0)
            if b_hh is None:
                b_hh = _tp.zeros(3 * H, dtype=w_hh._dtype, device=w_hh._device)
            out, _ = _gru_scan(xw, h, w_hh, b_hh)
            return (out.flip(0) if reverse else out), out[-1]
        wt = w_hh.t()
        outs = [None] * x._shape[0]
        for t in _steps(x, reverse):
            gh = h.matmul(wt) if b_hh is None else _tp.addmm(b_hh, h, wt)
            gx = xw[t]
            rz = (gx.narrow(1, 0, 2 * H) + gh.narrow(1, 0, 2 * H)).sigmoid()
            r, z = rz.narrow(1, 0, H), rz.narrow(1, H, H)
            n = (gx.narrow(1, 2 * H, H) + r * gh.narrow(1, 2 * H, H)).tanh()
            h = n + z * (h - n)
            outs[t] = h
        return _tp.stack(outs), h

    def forward(self, input, hx=None):
        input, batched = self._prepare(input, hx, "GRU")
        if hx is not None:
            if not batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            if batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not batched:
                hx = hx.unsqueeze(1)
        self._check_input(input)
        exp = self._expected_hidden(input, self.hidden_size)
        if hx is None:
            hx = _tp.zeros(exp, dtype=input._dtype, device=input._device)
        self._check_hidden(hx, exp)
        x = input.transpose(0, 1) if self.batch_first else input
        out, finals = self._layers(x, [hx[k] for k in range(exp[0])], self._step)
        h_n = _tp.stack(finals)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out, h_n = out.squeeze(0 if self.batch_first else 1), h_n.squeeze(1)
        return out, h_n


# -- cells ------------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """The parameters of a cell: weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden),
    bias_ih, bias_hh; all from U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty((num_chunks * hidden_size,), **kw))
            self.bias_hh = Parameter(empty((num_chunks * hidden_size,), **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batch(self, name, input, states):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for idx, v in states:
            if v is not None and v.dim() not in (1, 2):
                what = "hidden" if idx is None else f"hx[{idx}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {v.dim()}D instead")
        batched = input.dim() == 2
        return (input if batched else input.unsqueeze(0)), batched

    def _zeros(self, input):
        return _tp.zeros((input._shape[0], self.hidden_size), dtype=input._dtype, device=input._device)

    def _gates(self, input, h):
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        gh = F.linear(h, self.weight_hh, self.bias_hh)
        return gi, gh


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, batched = self._batch("RNNCell", input, [(None, hx)])
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        gi, gh = self._gates(input, hx)
        if self.nonlinearity == "tanh":
            h = (gi + gh).tanh()
        elif self.nonlinearity == "relu":
            h = (gi + gh).relu()
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``forward(input, (h, c))`` returns ``(h', c')`` (gates i, f, g, o)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, batched = self._batch("LSTMCell", input, list(enumerate(hx)) if hx is not None else [])
        if hx is None:
            h = c = self._zeros(input)
        else:
            h, c = (hx[0], hx[1]) if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        gi, gh = self._gates(input, h)
        a = gi + gh
        H = self.hidden_size
        i, f, g, o = a.narrow(1, 0, H).sigmoid(), a.narrow(1, H, H).sigmoid(), a.narrow(1, 2 * H, H).tanh(), \
            a.narrow(1, 3 * H, H).sigmoid()
        c = f * c + i * g
        h = o * c.tanh()
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, batched = self._batch("GRUCell", input, [(None, hx)])
        h = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        gi, gh = self._gates(input, h)
        H = self.hidden_size
        rz = (gi.narrow(1, 0, 2 * H) + gh.narrow(1, 0, 2 * H)).sigmoid()
        r, z = rz.narrow(1, 0, H), rz.narrow(1, H, H)
        n = (gi.narrow(1, 2 * H, H) + r * gh.narrow(1, 2 * H, H)).tanh()
        h = n + z * (h - n)
        return h if batched else h.squeeze(0)
