// models/callbacks.h
//
// The callbacks of Sequential::Fit, by family:
//   models/callbacks/callback.h    Callback (the protocol every callback
//                                  follows), TrainInfo, Logs, the claims
//                                  that keep a callback to one fit at a time
//   models/callbacks/logging.h     ProgressBar, CSVLogger, TensorBoard
//   models/callbacks/control.h     EarlyStopping, ReduceLROnPlateau,
//                                  TerminateOnNaN
//   models/callbacks/checkpoint.h  ModelCheckpoint
// This header includes them all.
#ifndef GRAPHGC_MODELS_CALLBACKS_H_
#define GRAPHGC_MODELS_CALLBACKS_H_

#include "models/callbacks/callback.h"
#include "models/callbacks/checkpoint.h"
#include "models/callbacks/control.h"
#include "models/callbacks/logging.h"

#endif  // GRAPHGC_MODELS_CALLBACKS_H_
