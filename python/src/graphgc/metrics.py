"""Keras's metrics, by object (graphgc.metrics.Precision(),
AUC(name="auc"), SparseTopKCategoricalAccuracy(k=3), ...) and by name for
compile() ("accuracy", "mae", "precision", "AUC", ...; each logged under the
name as given, as Keras's compile does). compile() computes them in C++ (the
metric registry, models/metric_registry.h); the objects also work on their
own on NumPy arrays (update_state, result, reset_state) with the same
formulas: mean metrics weigh samples, Precision, Recall and AUC count true
and false positives over every update since the last reset."""

import numpy as np

from graphgc import _graphgc

_EPSILON = 1e-7


def _fixed(class_name, name, value, allowed):
    if value != allowed:
        raise ValueError(f"{class_name}: {name} must be {allowed!r} "
                         f"(the only value graphgc supports), got {value!r}")


def _check_dtype(class_name, dtype):
    if dtype not in (None, "float32"):
        raise ValueError(f"{class_name}: dtype must be None or 'float32', "
                         f"got {dtype!r}")


class Metric:
    """What compile() takes as a metric object; the classes below derive
    from it. name: the logs' and History's key."""

    _kind = None  # the C++ registry's name

    def __init__(self, name=None, dtype=None):
        _check_dtype(type(self).__name__, dtype)
        self.name = name
        self.dtype = dtype
        self.reset_state()

    def _options(self):
        return {}

    def _cpp(self):
        return _graphgc.Metric(self._kind, self.name, **self._options())

    def reset_state(self):
        raise NotImplementedError

    def update_state(self, y_true, y_pred, sample_weight=None):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, **self._options()}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class _MeanMetric(Metric):
    """A Keras MeanMetricWrapper: the mean of _values(y_true, y_pred)
    (one per sample) over every sample updated since the last reset."""

    def reset_state(self):
        self._total = 0.0
        self._count = 0

    def update_state(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise NotImplementedError("graphgc metrics take no sample_weight")
        y_true = np.asarray(y_true)
        y_pred = np.asarray(y_pred, dtype=np.float64)
        values = np.asarray(self._values(y_true, y_pred), dtype=np.float64)
        self._total += float(values.sum())
        self._count += values.size

    def result(self):
        return self._total / self._count if self._count else 0.0


def _rows(y):
    return y.reshape(-1, 1) if y.ndim == 1 else y


class BinaryAccuracy(_MeanMetric):
    _kind = "binary_accuracy"

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        self.threshold = float(threshold)
        super().__init__(name, dtype)

    def _options(self):
        return {"threshold": self.threshold}

    def _values(self, t, p):
        return np.mean(_rows(t).astype(np.float64) ==
                       (_rows(p) > self.threshold), axis=-1)


class CategoricalAccuracy(_MeanMetric):
    _kind = "categorical_accuracy"

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        return np.argmax(t, axis=-1) == np.argmax(p, axis=-1)


class SparseCategoricalAccuracy(_MeanMetric):
    _kind = "sparse_categorical_accuracy"

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        return t.reshape(-1).astype(np.int64) == np.argmax(p, axis=-1)


def _in_top_k(ids, p, k):
    # TensorFlow's in_top_k: fewer than k classes score strictly higher.
    target = p[np.arange(len(ids)), ids]
    return np.sum(p > target[:, None], axis=-1) < k


class TopKCategoricalAccuracy(_MeanMetric):
    _kind = "top_k_categorical_accuracy"

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        self.k = int(k)
        super().__init__(name, dtype)

    def _options(self):
        return {"k": self.k}

    def _values(self, t, p):
        return _in_top_k(np.argmax(t, axis=-1), p, self.k)


class SparseTopKCategoricalAccuracy(_MeanMetric):
    _kind = "sparse_top_k_categorical_accuracy"

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy",
                 dtype=None):
        self.k = int(k)
        super().__init__(name, dtype)

    def _options(self):
        return {"k": self.k}

    def _values(self, t, p):
        return _in_top_k(t.reshape(-1).astype(np.int64), p, self.k)


class MeanSquaredError(_MeanMetric):
    _kind = "mean_squared_error"

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        return np.mean(np.square(p - t), axis=-1)


class MeanAbsoluteError(_MeanMetric):
    _kind = "mean_absolute_error"

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        return np.mean(np.abs(p - t), axis=-1)


class MeanAbsolutePercentageError(_MeanMetric):
    _kind = "mean_absolute_percentage_error"

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        return 100 * np.mean(
            np.abs((t - p) / np.maximum(np.abs(t), _EPSILON)), axis=-1)


class MeanSquaredLogarithmicError(_MeanMetric):
    _kind = "mean_squared_logarithmic_error"

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        return np.mean(np.square(np.log1p(np.maximum(p, _EPSILON)) -
                                 np.log1p(np.maximum(t, _EPSILON))), axis=-1)


class RootMeanSquaredError(MeanSquaredError):
    _kind = "root_mean_squared_error"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name, dtype)

    def result(self):
        return float(np.sqrt(super().result()))


class CosineSimilarity(_MeanMetric):
    _kind = "cosine_similarity"

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        _fixed("CosineSimilarity", "axis", axis, -1)
        super().__init__(name, dtype)

    def _values(self, t, p):
        def unit(x):
            return x / np.sqrt(np.maximum(np.sum(x * x, axis=-1,
                                                 keepdims=True), 1e-12))
        return np.sum(unit(t) * unit(p), axis=-1)


class LogCoshError(_MeanMetric):
    _kind = "log_cosh_error"

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(name, dtype)

    def _values(self, t, p):
        x = p - t
        return np.mean(x + np.logaddexp(0.0, -2.0 * x) - np.log(2.0), axis=-1)


def _clipped(p):
    return np.clip(p, _EPSILON, 1 - _EPSILON)


class BinaryCrossentropy(_MeanMetric):
    _kind = "binary_crossentropy"

    def __init__(self, name="binary_crossentropy", dtype=None,
                 from_logits=False, label_smoothing=0):
        _fixed("BinaryCrossentropy", "from_logits", from_logits, False)
        _fixed("BinaryCrossentropy", "label_smoothing", label_smoothing, 0)
        super().__init__(name, dtype)

    def _values(self, t, p):
        p = _clipped(p)
        return np.mean(-(t * np.log(p) + (1 - t) * np.log(1 - p)), axis=-1)


class CategoricalCrossentropy(_MeanMetric):
    _kind = "categorical_crossentropy"

    def __init__(self, name="categorical_crossentropy", dtype=None,
                 from_logits=False, label_smoothing=0, axis=-1):
        _fixed("CategoricalCrossentropy", "from_logits", from_logits, False)
        _fixed("CategoricalCrossentropy", "label_smoothing", label_smoothing,
               0)
        _fixed("CategoricalCrossentropy", "axis", axis, -1)
        super().__init__(name, dtype)

    def _values(self, t, p):
        p = p / np.sum(p, axis=-1, keepdims=True)
        return -np.sum(t * np.log(_clipped(p)), axis=-1)


class SparseCategoricalCrossentropy(_MeanMetric):
    _kind = "sparse_categorical_crossentropy"

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None,
                 from_logits=False, axis=-1):
        _fixed("SparseCategoricalCrossentropy", "from_logits", from_logits,
               False)
        _fixed("SparseCategoricalCrossentropy", "axis", axis, -1)
        super().__init__(name, dtype)

    def _values(self, t, p):
        p = p / np.sum(p, axis=-1, keepdims=True)
        ids = t.reshape(-1).astype(np.int64)
        return -np.log(_clipped(p[np.arange(len(ids)), ids]))


class _ConfusionMetric(Metric):
    """True/false positives and negatives at thresholds, over every
    element of every update since the last reset (a prediction above a
    threshold is positive, a nonzero label true)."""

    def _thresholds(self):
        raise NotImplementedError

    def reset_state(self):
        n = len(self._thresholds())
        self._tp = np.zeros(n)
        self._fp = np.zeros(n)
        self._tn = np.zeros(n)
        self._fn = np.zeros(n)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise NotImplementedError("graphgc metrics take no sample_weight")
        t = np.asarray(y_true).reshape(-1, 1) != 0
        p = np.asarray(y_pred, dtype=np.float32).reshape(-1, 1)
        said = p > np.asarray(self._thresholds(), dtype=np.float32)[None, :]
        self._tp += np.sum(said & t, axis=0)
        self._fp += np.sum(said & ~t, axis=0)
        self._tn += np.sum(~said & ~t, axis=0)
        self._fn += np.sum(~said & t, axis=0)


def _divide_no_nan(a, b):
    return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))


def _one_threshold(class_name, thresholds, top_k, class_id):
    if top_k is not None or class_id is not None:
        raise NotImplementedError(f"{class_name}: top_k and class_id are not "
                                  "supported by graphgc")
    if thresholds is None:
        return 0.5
    if isinstance(thresholds, (list, tuple)):
        if len(thresholds) != 1:
            raise NotImplementedError(f"{class_name}: one threshold only")
        thresholds = thresholds[0]
    thresholds = float(thresholds)
    if not 0.0 <= thresholds <= 1.0:
        raise ValueError(f"{class_name}: threshold values must be in [0, 1]."
                         f" Received: {thresholds}")
    return thresholds


class Precision(_ConfusionMetric):
    _kind = "precision"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None,
                 dtype=None):
        self.thresholds = _one_threshold("Precision", thresholds, top_k,
                                         class_id)
        super().__init__(name or "precision", dtype)

    def _thresholds(self):
        return [self.thresholds]

    def _options(self):
        return {"threshold": self.thresholds}

    def result(self):
        return float(_divide_no_nan(self._tp, self._tp + self._fp)[0])


class Recall(_ConfusionMetric):
    _kind = "recall"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None,
                 dtype=None):
        self.thresholds = _one_threshold("Recall", thresholds, top_k,
                                         class_id)
        super().__init__(name or "recall", dtype)

    def _thresholds(self):
        return [self.thresholds]

    def _options(self):
        return {"threshold": self.thresholds}

    def result(self):
        return float(_divide_no_nan(self._tp, self._tp + self._fn)[0])


class AUC(_ConfusionMetric):
    """The area under the ROC curve (summation_method "interpolation")."""

    _kind = "auc"

    def __init__(self, num_thresholds=200, curve="ROC",
                 summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        if num_thresholds <= 1:
            raise ValueError("Argument `num_thresholds` must be an integer > "
                             f"1. Received: num_thresholds={num_thresholds}")
        _fixed("AUC", "curve", curve, "ROC")
        _fixed("AUC", "summation_method", summation_method, "interpolation")
        _fixed("AUC", "thresholds", thresholds, None)
        _fixed("AUC", "multi_label", multi_label, False)
        _fixed("AUC", "label_weights", label_weights, None)
        _fixed("AUC", "from_logits", from_logits, False)
        self.num_thresholds = int(num_thresholds)
        self.curve = curve
        self.summation_method = summation_method
        super().__init__(name or "auc", dtype)

    def _thresholds(self):
        n = self.num_thresholds
        return ([0.0 - _EPSILON] + [(i + 1) / (n - 1) for i in range(n - 2)]
                + [1.0 + _EPSILON])

    def _options(self):
        return {"num_thresholds": self.num_thresholds}

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype,
                "num_thresholds": self.num_thresholds, "curve": self.curve,
                "summation_method": self.summation_method}

    def result(self):
        tpr = _divide_no_nan(self._tp, self._tp + self._fn)
        fpr = _divide_no_nan(self._fp, self._fp + self._tn)
        return float(np.sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2))


_BY_NAME = {}
for _cls in (BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
             TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy,
             MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
             MeanSquaredLogarithmicError, RootMeanSquaredError,
             CosineSimilarity, LogCoshError, BinaryCrossentropy,
             CategoricalCrossentropy, SparseCategoricalCrossentropy,
             Precision, Recall, AUC):
    _BY_NAME[_cls.__name__] = _cls
    _BY_NAME[_cls._kind] = _cls
_BY_NAME.update({"mse": MeanSquaredError, "MSE": MeanSquaredError,
                 "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError,
                 "mape": MeanAbsolutePercentageError,
                 "MAPE": MeanAbsolutePercentageError,
                 "msle": MeanSquaredLogarithmicError,
                 "MSLE": MeanSquaredLogarithmicError,
                 "bce": BinaryCrossentropy, "BCE": BinaryCrossentropy})


def get(identifier):
    """A metric object for a class name, snake-case name or alias ("mae",
    "Precision", "auc"), or the object itself. ("accuracy" depends on the
    model's loss and output: compile() resolves it.)"""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    raise ValueError(f"Could not interpret metric identifier: {identifier}")


def _compile_args(metrics):
    """compile()'s metrics as (names, configured, keys): the strings (each
    the metric of that name, logged under the string as Keras's compile
    names it, and saved in the model's compile_config), the objects as C++
    Metrics, and every metric's logs key in the order given."""
    if metrics is None:
        return [], [], []
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    names, configured, keys = [], [], []
    for metric in metrics:
        if isinstance(metric, str):
            names.append(metric)
            keys.append(metric)
        elif isinstance(metric, Metric):
            configured.append(metric._cpp())
            keys.append(metric.name)
        else:
            raise ValueError("metrics must be names such as \"accuracy\" or "
                             f"graphgc.metrics objects, not {metric!r}")
    return names, configured, keys
