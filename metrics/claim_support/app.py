"""Hugging Face Space of the rageval evaluate module claim_support: evaluate's Gradio widget.

Written by `rageval export-metrics`.  The module is loaded from this folder, so the
Space works under any namespace; the widget uses Gradio 3 APIs, hence the card's
sdk_version.  Requirements: requirements.txt.
"""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).resolve().with_name("claim_support.py")))
launch_gradio_widget(module)
