//! The ordinary pull requests' titles and files, and the people who open them.

/// Titles and (space-separated) files of ordinary pull requests: none goes near the graph code or
/// its tests.
pub(super) const CATALOG: &[(&str, &str)] = &[
    (
        "Add Stream.wait_event timeout argument",
        "cuda_core/cuda/core/_stream.pyx cuda_core/tests/test_stream.py",
    ),
    (
        "pathfinder: find nvvm in conda layouts",
        "cuda_pathfinder/cuda/pathfinder/_dynamic_libs/find_nvidia_dynamic_lib.py cuda_pathfinder/tests/test_find_nvidia_dynamic_lib.py",
    ),
    (
        "Regenerate bindings for CUDA 13.0.2",
        "cuda_bindings/cuda/bindings/driver.pyx.in cuda_bindings/cuda/bindings/runtime.pyx.in cuda_bindings/cuda/bindings/cydriver.pxd.in",
    ),
    (
        "docs: fix the LaunchConfig example",
        "cuda_core/docs/source/getting-started.rst",
    ),
    (
        "Cache device attributes in Device.properties",
        "cuda_core/cuda/core/_device.pyx cuda_core/tests/test_device.py",
    ),
    (
        "CI: bump actions/setup-python",
        ".github/workflows/test-wheel-linux.yml .github/workflows/test-wheel-windows.yml",
    ),
    (
        "Support NVRTC precompiled headers in Program",
        "cuda_core/cuda/core/_program.py cuda_core/tests/test_program.py",
    ),
    (
        "bindings: expose cuMemBatchDecompressAsync",
        "cuda_bindings/cuda/bindings/driver.pyx.in cuda_bindings/tests/test_cuda.py",
    ),
    (
        "Fix ObjectCode.from_cubin with bytes input",
        "cuda_core/cuda/core/_module.py cuda_core/tests/test_module.py",
    ),
    (
        "pathfinder: prefer site-packages over CUDA_HOME for nvJitLink",
        "cuda_pathfinder/cuda/pathfinder/_dynamic_libs/load_nvidia_dynamic_lib.py",
    ),
    (
        "Add MemoryResource.attributes",
        "cuda_core/cuda/core/_memory/_memory_pool.pyx cuda_core/tests/memory/test_memory_pool.py",
    ),
    (
        "CI: run the docs build on every PR",
        ".github/workflows/build-docs.yml",
    ),
    (
        "Typo fixes in the bindings docs",
        "cuda_bindings/docs/source/overview.rst",
    ),
    (
        "Linker: accept LTO-IR from Program.compile",
        "cuda_core/cuda/core/_linker.py cuda_core/tests/test_linker.py",
    ),
    (
        "Drop Python 3.9 leftovers",
        "cuda_core/pyproject.toml cuda_bindings/pyproject.toml cuda_pathfinder/pyproject.toml",
    ),
    (
        "Add a __repr__ to Event",
        "cuda_core/cuda/core/_event.pyx cuda_core/tests/test_event.py",
    ),
    (
        "bindings: make nvrtcGetSupportedArchs return a tuple",
        "cuda_bindings/cuda/bindings/nvrtc.pyx.in cuda_bindings/tests/test_nvrtc.py",
    ),
    (
        "Build: pin Cython below 3.3",
        "cuda_bindings/pyproject.toml cuda_core/pyproject.toml",
    ),
    (
        "StridedMemoryView: support DLPack 1.1 versioned capsules",
        "cuda_core/cuda/core/_memoryview.pyx cuda_core/tests/test_utils.py",
    ),
    (
        "pathfinder: add find_nvidia_header_directory for cccl",
        "cuda_pathfinder/cuda/pathfinder/_headers/find_nvidia_headers.py cuda_pathfinder/tests/test_find_nvidia_headers.py",
    ),
    (
        "CI: retry the mini-CTK download",
        ".github/actions/fetch_ctk/action.yml",
    ),
    (
        "Launch: validate grid dimensions before cuLaunchKernelEx",
        "cuda_core/cuda/core/_launcher.pyx cuda_core/tests/test_launcher.py",
    ),
    (
        "Release notes for cuda-bindings 13.0.3",
        "cuda_bindings/docs/source/release/13.0.3-notes.rst",
    ),
    (
        "Device.sync: release the GIL",
        "cuda_core/cuda/core/_device.pyx",
    ),
    (
        "Add system.get_driver_version to cuda.core",
        "cuda_core/cuda/core/system/_system.pyx cuda_core/tests/system/test_system.py",
    ),
    (
        "IPC: document the supported memory resources",
        "cuda_core/docs/source/interoperability.rst",
    ),
    (
        "bindings: fix cyruntime stubs on Windows",
        "cuda_bindings/cuda/bindings/_bindings/cyruntime_windows.pyx.in",
    ),
    ("pre-commit autoupdate", ".pre-commit-config.yaml"),
    (
        "Add Program options for -fdevice-time-trace",
        "cuda_core/cuda/core/_program.py cuda_core/tests/test_program.py",
    ),
    (
        "VMM: implement grow for VirtualMemoryResource",
        "cuda_core/cuda/core/_memory/_virtual_memory_resource.py cuda_core/tests/memory/test_vmm.py",
    ),
    (
        "CI: move Windows jobs to the MCDM runners",
        ".github/workflows/test-wheel-windows.yml ci/test-matrix.json",
    ),
    (
        "Fix a refcount leak in Kernel.attributes",
        "cuda_core/cuda/core/_module.py",
    ),
    (
        "pathfinder: 1.6.0 release notes",
        "cuda_pathfinder/docs/source/release/1.6.0-notes.rst",
    ),
    (
        "bindings: add nvFatbin bindings",
        "cuda_bindings/cuda/bindings/nvfatbin.pyx cuda_bindings/tests/test_nvfatbin.py",
    ),
    (
        "Add examples/thread_block_cluster.py",
        "cuda_core/examples/thread_block_cluster.py",
    ),
    (
        "Test: skip NVML tests on GPUs without NVML support",
        "cuda_core/tests/system/test_system_device.py",
    ),
    (
        "Checkout: fetch tags for setuptools-scm",
        ".github/workflows/build-wheel.yml",
    ),
    (
        "Stream: add priority range query",
        "cuda_core/cuda/core/_stream.pyx cuda_core/tests/test_stream.py",
    ),
    (
        "docs: version switcher for 1.1",
        "cuda_core/docs/source/conf.py cuda_core/docs/versions.json",
    ),
    (
        "bindings: speed up cudaGetErrorString",
        "cuda_bindings/cuda/bindings/runtime.pyx.in",
    ),
];

pub(super) const USERS: &[&str] = &[
    "dev-ana", "dev-bram", "dev-chen", "dev-dara", "dev-eli", "dev-femi", "dev-gus",
];

pub(super) const FOLLOW_UPS: &[&str] = &[
    "Address review comments",
    "Apply suggestions from code review",
    "Fix pre-commit",
    "Add a test",
    "Rebase on main",
];
