# setup.py — `pip install .` for the rlflow Python package (python/rlflow,
# docs/python.md). The C extension (python/ext) links the project's static
# libraries, so the libraries are built by the project's own CMake rather
# than listed again here: CMake knows every library's sources, flags and
# system dependencies (Z3, SQLite, protobuf-c, oneDNN, OpenMP, MPI, ONNX
# Runtime's loader), and one list of them is kept. build_ext below runs
#   cmake -S . -B <build dir> -DPython3_EXECUTABLE=<this python>
#   cmake --build <build dir> --target _rlflow rules-default
# and copies the extension and the default rules database (made at build
# time, about 2 minutes on 2 cores) into the package. Offline: no index and
# no build isolation are needed (pip install --no-build-isolation .).
#
# Environment:
#   RLFLOW_BUILD_DIR  an existing CMake build tree to use as it is (not
#                     reconfigured; its Python must be this one): the
#                     tests use the tree they run in. Default build/pip.
#   RLFLOW_JOBS       parallel build jobs (default: the CPUs).
#   RLFLOW_RULES=0    do not make the default rules at install time; the
#                     package then makes them in the user cache on first use.
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        for line in f:
            if line.startswith("project(rlflow VERSION "):
                return line.split()[2]
    raise RuntimeError("CMakeLists.txt: no project(rlflow VERSION ...) line")


class CMakeBuild(build_ext):
    """Builds the extension with the project's CMake (see the top)."""

    def run(self):
        given = os.environ.get("RLFLOW_BUILD_DIR")
        build = os.path.abspath(given or os.path.join(ROOT, "build", "pip"))
        jobs = os.environ.get("RLFLOW_JOBS") or str(os.cpu_count() or 2)
        rules = os.environ.get("RLFLOW_RULES", "1") != "0"
        if not given:
            self.spawn(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                        "-DBUILD_TESTING=OFF", "-DXF_RULES_DEFAULT=OFF",
                        "-DPython3_EXECUTABLE=" + sys.executable])
        targets = ["_rlflow"] + (["rules-default"] if rules else [])
        self.spawn(["cmake", "--build", build, "-j", jobs, "--target"] + targets)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build, "python", "_rlflow" + suffix)
        if not os.path.exists(built):
            raise RuntimeError("%s was not built: the build tree's Python is not %s "
                               "(suffix %s)" % (built, sys.executable, suffix))
        ext = self.extensions[0]
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)
        if rules:
            tools = os.path.join(build, "tools")
            for name in os.listdir(tools):
                if name.startswith("rules-default-") and name.endswith(".db"):
                    shutil.copyfile(os.path.join(tools, name),
                                    os.path.join(os.path.dirname(dest), name))


setup(
    name="rlflow",
    version=project_version(),
    description="Optimise ONNX models with proved graph substitutions",
    package_dir={"": "python"},
    packages=["rlflow"],
    ext_modules=[Extension("rlflow._rlflow", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join("build", "setuptools")},
             "egg_info": {"egg_base": "build"}},
    python_requires=">=3.10",
    zip_safe=False,
)
