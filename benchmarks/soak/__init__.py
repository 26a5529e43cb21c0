"""The soak benchmark (``python -m benchmarks soak``): ``run`` orchestrates, ``agents`` is the
traffic, ``sample`` what is read every 10 s, ``verdict`` the slope test, ``judge`` the
figures, ``plot`` the picture."""
