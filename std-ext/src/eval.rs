//! Evaluation metrics of selectors on a dataset.
