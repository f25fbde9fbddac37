from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class RuntimeConfig(AppConfig):
    name = "beyond_site.runtime"
    label = "runtime"

    def ready(self):
        # Every app's background tasks, registered by name with the job interface (runs/jobs.py),
        # in every process: a web server defers them, a worker executes them.
        autodiscover_modules("tasks")
