from importlib import import_module

from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "beyond_site.calibration"
    label = "calibration"

    def ready(self):
        # A run's trust status is read from this app's reports, a layer above the runs
        # (docs/architecture.md): loading this app's own `trust` module, once the models are
        # ready, hands the reports to the runs through their one door (runs/trust.py).
        import_module(f"{self.name}.trust")
