# Sourced by the build scripts. Prints the CMake generator option for a build directory: Ninja
# where it is installed (install-deps.sh installs it), because Ninja compiles a target's sources
# while the targets it links against are still building, where Make waits for them; nothing for a
# directory already configured, which keeps its generator.
cmake_generator_option() {
  local build_dir=$1
  if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then echo "-GNinja"; fi
}
