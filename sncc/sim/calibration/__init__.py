"""Calibration: reference scenarios (seed 000, CloudMatrix-Infer), the fit of profile constants to
measured points (``sncc calibrate``), measurement files, and the intervals derived from
leave-one-out residuals."""
