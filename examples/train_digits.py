"""Train a digit classifier with tensorplug: ``python examples/train_digits.py --model cnn``.

The training code is ``tensorplug.demo`` (public API only; ``tensorplug demo``
runs the same thing); read it as the example.
"""

from tensorplug.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
