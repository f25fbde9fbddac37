import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_it_imports_the_pipeline_without_django_configured():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = ("import sys, pipeline.orchestrator, pipeline.requests, pipeline.providers.scripted, "
            "pipeline.citations, pipeline.frameworks, pipeline.providers.offline, pipeline.providers.registry; "
            "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), 'django imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_no_module_of_the_core_imports_django():
    offenders = [p for p in (ROOT / "pipeline").rglob("*.py")
                 if "import django" in p.read_text() or "from django" in p.read_text()
                 or "beyond_site" in p.read_text()]
    assert offenders == []
