from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "beyond_site.calibration"
    label = "calibration"
