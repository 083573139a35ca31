// The path a tile takes between two ranks when the MPI is not CUDA-aware: GPU -> host, MPI from
// host to host, host -> GPU. Times each leg for tiles of nb x nb doubles between ranks 0 and 1
// (pageable and pinned host buffers), so that a distributed factorization's traffic can be set
// against the bandwidth this MPI gives: one message at a time, four at once, and four at once in
// each direction together (each way: the rate of one direction while the other runs). Run under
// mpirun with two ranks, one GPU each.
//   bench_tile_transfers [--nb 1024,2048] [--repetitions 20] [--json]
#include <cuda_runtime.h>
#include <fmt/core.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Messages in flight in the in-flight columns (StarPU-MPI keeps up to 10 sends in flight).
constexpr int kInFlight = 4;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fmt::print(stderr, "{}: {}\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> values;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    values.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return values;
}

// Seconds per message of `bytes` from rank 0 to rank 1 (rank 1 acknowledges the last one).
double mpi_seconds(void* buffer, std::size_t bytes, int repetitions, int rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int r = 0; r < repetitions; ++r) {
    if (rank == 0) MPI_Send(buffer, static_cast<int>(bytes), MPI_BYTE, 1, r, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buffer, static_cast<int>(bytes), MPI_BYTE, 0, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  char ack = 0;
  if (rank == 1) MPI_Send(&ack, 1, MPI_BYTE, 0, repetitions, MPI_COMM_WORLD);
  if (rank == 0) MPI_Recv(&ack, 1, MPI_BYTE, 1, repetitions, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return std::chrono::duration<double>(Clock::now() - start).count() / repetitions;
}

// Seconds per message of `bytes` with `in_flight` messages posted at a time, from rank 0 to rank 1
// (both_ways false) or from each rank to the other at once (both_ways true: seconds per message in
// each direction). A distributed factorization keeps several sends in flight, in both directions.
double mpi_in_flight_seconds(const void* send, std::vector<void*>& receive, std::size_t bytes, int repetitions,
                             int rank, bool both_ways) {
  const int in_flight = static_cast<int>(receive.size());
  const int other = 1 - rank;
  const bool sends = both_ways || rank == 0;
  const bool receives = both_ways || rank == 1;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int first = 0; first < repetitions; first += in_flight) {
    std::vector<MPI_Request> requests;
    for (int m = 0; m < in_flight && first + m < repetitions; ++m) {
      MPI_Request request;
      if (receives) {
        MPI_Irecv(receive[static_cast<std::size_t>(m)], static_cast<int>(bytes), MPI_BYTE, other, first + m,
                  MPI_COMM_WORLD, &request);
        requests.push_back(request);
      }
      if (sends) {
        MPI_Isend(send, static_cast<int>(bytes), MPI_BYTE, other, first + m, MPI_COMM_WORLD, &request);
        requests.push_back(request);
      }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return std::chrono::duration<double>(Clock::now() - start).count() / repetitions;
}

// Seconds per copy of `bytes` between the GPU and `host` (to_host: device to host).
double copy_seconds(void* device, void* host, std::size_t bytes, bool to_host, int repetitions) {
  check(cudaDeviceSynchronize(), "sync");
  const auto start = Clock::now();
  for (int r = 0; r < repetitions; ++r)
    check(to_host ? cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost)
                  : cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice),
          "cudaMemcpy");
  return std::chrono::duration<double>(Clock::now() - start).count() / repetitions;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> sizes = {1024, 2048};
  int repetitions = 20;
  bool json = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--nb" && a + 1 < argc) sizes = parse_list(argv[++a]);
    else if (arg == "--repetitions" && a + 1 < argc) repetitions = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--json") json = true;
  }
  if (size != 2) {
    if (rank == 0) fmt::print(stderr, "bench_tile_transfers: run with two ranks\n");
    MPI_Finalize();
    return 1;
  }
  if (rank == 0 && !json)
    fmt::print("{:>6} {:>9} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "nb", "MiB", "D2H GB/s",
               "MPI pageable", "MPI pinned", fmt::format("MPI {} at once", kInFlight), "each way", "H2D GB/s", "path GB/s");
  for (const int nb : sizes) {
    const std::size_t bytes = static_cast<std::size_t>(nb) * nb * sizeof(double);
    void* device = nullptr;
    void* pinned = nullptr;
    check(cudaMalloc(&device, bytes), "cudaMalloc");
    check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
    std::vector<char> pageable(bytes, 1);
    std::memset(pinned, 1, bytes);
    const double mpi_pageable = mpi_seconds(pageable.data(), bytes, repetitions, rank);
    const double mpi_pinned = mpi_seconds(pinned, bytes, repetitions, rank);
    std::vector<void*> receive(kInFlight);
    for (void*& buffer : receive) check(cudaMallocHost(&buffer, bytes), "cudaMallocHost");
    const double mpi_in_flight = mpi_in_flight_seconds(pinned, receive, bytes, repetitions, rank, false);
    const double mpi_both_ways = mpi_in_flight_seconds(pinned, receive, bytes, repetitions, rank, true);
    for (void* buffer : receive) cudaFreeHost(buffer);
    const double d2h = copy_seconds(device, pinned, bytes, true, repetitions);
    const double h2d = copy_seconds(device, pinned, bytes, false, repetitions);
    const double gb = double(bytes) * 1e-9;
    const double path = d2h + mpi_pinned + h2d;  // one tile's hops, one after the other
    if (rank == 0) {
      if (json)
        fmt::print("{{\"nb\": {}, \"bytes\": {}, \"d2h_gbs\": {:.3f}, \"mpi_pageable_gbs\": {:.3f}, "
                   "\"mpi_pinned_gbs\": {:.3f}, \"mpi_in_flight_gbs\": {:.3f}, \"mpi_each_way_gbs\": {:.3f}, "
                   "\"h2d_gbs\": {:.3f}, \"path_gbs\": {:.3f}}}\n",
                   nb, bytes, gb / d2h, gb / mpi_pageable, gb / mpi_pinned, gb / mpi_in_flight, gb / mpi_both_ways,
                   gb / h2d, gb / path);
      else
        fmt::print("{:>6} {:>9.1f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f}\n", nb,
                   double(bytes) / (1 << 20), gb / d2h, gb / mpi_pageable, gb / mpi_pinned, gb / mpi_in_flight,
                   gb / mpi_both_ways, gb / h2d, gb / path);
    }
    cudaFreeHost(pinned);
    cudaFree(device);
  }
  MPI_Finalize();
  return 0;
}
