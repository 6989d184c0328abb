// Anchor for the catalogue (issues 15/16): CUB/Thrust gather, scatter, histogram, merge, reduce-by-key
// and scan-by-key on the same GPU, timed with CUDA events (device time, median of repeats), printed in
// the same format as ../shared/anchors/cub_anchor.cu. Data is generated exactly as
// scripts/probe/catalogue-probe.ts generates it, so the two runs move the same bytes:
//   keys a[i]      = hash(i, 1234)                       (the anchor's fill_u32)
//   gather/scatter: map[i] = (i * 2654435761) & (n - 1)  (a permutation: odd multiplier mod 2^k);
//                   "blocked" map: i ^ 31 (reverses each 32-element block: coalesced, not identity)
//   histogram:      samples a[i] >> 8 in [0, 2^24), 256 even bins over [0, 2^24)
//   merge:          two sorted halves of n/2 random keys each (sorted with DeviceRadixSort, untimed)
//   by key:         keys[i] = i >> 4 (runs of 16), values a[i], plus
//   zip transform:  x, y, z f32 in [0, 1) (hashes of i with seeds 1234, 1235, 1236), out = x * y + z,
//                   thrust::transform over a zip of the three (scripts/probe/zip-select-probe.ts),
//                   beside the unary v * 2 + 1; bounding box: thrust::transform_reduce of zip(x, y)
//                   to float4 (min x, max x, min y, max y), Thrust's bounding_box example (its time
//                   includes the 16-byte result's copy to the host)
// Compile: nvcc -O3 -std=c++17 -arch=sm_90 -o cub_catalogue scripts/probe/cub_catalogue.cu
#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <thrust/device_ptr.h>
#include <thrust/gather.h>
#include <thrust/scatter.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

__global__ void fill_u32(unsigned *a, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) { unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15; a[i] = x; }
}
__global__ void fill_map(unsigned *m, size_t n, int blocked) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) m[i] = blocked ? ((unsigned)i ^ 31u) : (((unsigned)i * 2654435761u) & (unsigned)(n - 1));
}
__global__ void shift8(const unsigned *a, unsigned *b, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] >> 8;
}
__global__ void run_keys(unsigned *k, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) k[i] = (unsigned)(i >> 4);
}
__global__ void fill_f32(float *a, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) { unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15; a[i] = (x >> 8) * (1.0f / 16777216.0f); }
}
struct fma3 {
  __host__ __device__ float operator()(const thrust::tuple<float, float, float> &t) const {
    return thrust::get<0>(t) * thrust::get<1>(t) + thrust::get<2>(t);
  }
};
struct twice_plus1 {
  __host__ __device__ float operator()(float v) const { return v * 2.0f + 1.0f; }
};
struct to_box {
  __host__ __device__ float4 operator()(const thrust::tuple<float, float> &t) const {
    float x = thrust::get<0>(t), y = thrust::get<1>(t);
    return make_float4(x, x, y, y);
  }
};
struct merge_box {
  __host__ __device__ float4 operator()(const float4 &a, const float4 &b) const {
    return make_float4(fminf(a.x, b.x), fmaxf(a.y, b.y), fminf(a.z, b.z), fmaxf(a.w, b.w));
  }
};
__global__ void copy4(const uint4 *a, uint4 *b, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

static float time_ms(std::function<void()> f, int reps) {
  f(); cudaDeviceSynchronize();
  std::vector<float> t;
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  for (int r = 0; r < reps; r++) { cudaEventRecord(s); f(); cudaEventRecord(e); cudaEventSynchronize(e); float ms; cudaEventElapsedTime(&ms, s, e); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
static void report(const char *name, int lg, size_t n, double bytes, float ms) {
  printf("%-28s 2^%-2d %9.4f ms %8.1f GB/s %8.2f Gelem/s\n", name, lg, ms, bytes / ms / 1e6, n / ms / 1e6);
}

int main() {
  for (int lg : {20, 24, 26, 28}) {
    size_t n = (size_t)1 << lg;
    unsigned *a, *b, *m, *mb, *k, *s, *u, *o, *hist; int *nruns;
    cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&m, n * 4); cudaMalloc(&mb, n * 4);
    cudaMalloc(&k, n * 4); cudaMalloc(&s, n * 4); cudaMalloc(&u, n * 4); cudaMalloc(&o, n * 4);
    cudaMalloc(&hist, 256 * 4); cudaMalloc(&nruns, 8);
    int g = (int)((n + 255) / 256);
    fill_u32<<<g, 256>>>(a, n, 1234); fill_map<<<g, 256>>>(m, n, 0); fill_map<<<g, 256>>>(mb, n, 1);
    shift8<<<g, 256>>>(a, s, n); run_keys<<<g, 256>>>(k, n);
    void *tmp = nullptr; size_t tb = 0, need;
    auto ensure = [&](size_t sz) { if (sz > tb) { if (tmp) cudaFree(tmp); cudaMalloc(&tmp, sz); tb = sz; } };
    int reps = lg >= 28 ? 10 : 30;
    float ms;
    ms = time_ms([&] { copy4<<<4096, 256>>>((const uint4 *)a, (uint4 *)b, n / 4); }, reps); report("copy (r+w)", lg, n, 8.0 * n, ms);
    thrust::device_ptr<unsigned> ap(a), bp(b), mp(m), mbp(mb);
    ms = time_ms([&] { thrust::gather(mp, mp + n, ap, bp); }, reps); report("gather u32 random", lg, n, 12.0 * n, ms);
    ms = time_ms([&] { thrust::gather(mbp, mbp + n, ap, bp); }, reps); report("gather u32 blocked", lg, n, 12.0 * n, ms);
    ms = time_ms([&] { thrust::scatter(ap, ap + n, mp, bp); }, reps); report("scatter u32 random", lg, n, 12.0 * n, ms);
    ms = time_ms([&] { thrust::scatter(ap, ap + n, mbp, bp); }, reps); report("scatter u32 blocked", lg, n, 12.0 * n, ms);
    need = 0; cub::DeviceHistogram::HistogramEven(nullptr, need, s, hist, 257, 0u, 1u << 24, (int)n); ensure(need);
    ms = time_ms([&] { size_t t = tb; cub::DeviceHistogram::HistogramEven(tmp, t, s, hist, 257, 0u, 1u << 24, (int)n); }, reps);
    report("histogram u32 256 bins", lg, n, 4.0 * n, ms);
    // Two sorted halves of random keys in u (sorted untimed), merged into o.
    size_t h = n / 2;
    need = 0; cub::DeviceRadixSort::SortKeys(nullptr, need, a, u, (int)h); ensure(need);
    { size_t t = tb; cub::DeviceRadixSort::SortKeys(tmp, t, a, u, (int)h); }
    { size_t t = tb; cub::DeviceRadixSort::SortKeys(tmp, t, a + h, u + h, (int)h); }
    need = 0; cub::DeviceMerge::MergeKeys(nullptr, need, u, (int)h, u + h, (int)h, o); ensure(need);
    ms = time_ms([&] { size_t t = tb; cub::DeviceMerge::MergeKeys(tmp, t, u, (int)h, u + h, (int)h, o); }, reps);
    report("merge u32 keys", lg, n, 8.0 * n, ms);
    need = 0; cub::DeviceReduce::ReduceByKey(nullptr, need, k, u, a, o, nruns, cuda::std::plus<unsigned>{}, (int)n); ensure(need);
    ms = time_ms([&] { size_t t = tb; cub::DeviceReduce::ReduceByKey(tmp, t, k, u, a, o, nruns, cuda::std::plus<unsigned>{}, (int)n); }, reps);
    report("reduce_by_key u32 runs16", lg, n, 8.0 * n + 8.0 * n / 16, ms);
    need = 0; cub::DeviceScan::InclusiveSumByKey(nullptr, need, k, a, o, (int)n); ensure(need);
    ms = time_ms([&] { size_t t = tb; cub::DeviceScan::InclusiveSumByKey(tmp, t, k, a, o, (int)n); }, reps);
    report("scan_by_key u32 runs16", lg, n, 12.0 * n, ms);
    {
      float *x = (float *)s, *y = (float *)u, *z = (float *)mb, *w = (float *)o;
      fill_f32<<<g, 256>>>(x, n, 1234); fill_f32<<<g, 256>>>(y, n, 1235); fill_f32<<<g, 256>>>(z, n, 1236);
      thrust::device_ptr<float> xp(x), yp(y), zp(z), wp(w);
      auto zb = thrust::make_zip_iterator(thrust::make_tuple(xp, yp, zp));
      ms = time_ms([&] { thrust::transform(zb, zb + n, wp, fma3()); }, reps);
      report("transform f32 3 in (x*y+z)", lg, n, 16.0 * n, ms);
      ms = time_ms([&] { thrust::transform(xp, xp + n, wp, twice_plus1()); }, reps);
      report("transform f32 (v*2+1)", lg, n, 8.0 * n, ms);
      auto bb = thrust::make_zip_iterator(thrust::make_tuple(xp, yp));
      float inf = std::numeric_limits<float>::infinity();
      float4 box;
      ms = time_ms([&] { box = thrust::transform_reduce(bb, bb + n, to_box(), make_float4(inf, -inf, inf, -inf), merge_box()); }, reps);
      report("bounding box f32 zip2", lg, n, 8.0 * n, ms);
      if (lg == 20) printf("# bounding box 2^20: %g %g %g %g\n", box.x, box.y, box.z, box.w);
    }
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { printf("cuda error: %s\n", cudaGetErrorString(err)); return 1; }
    cudaFree(a); cudaFree(b); cudaFree(m); cudaFree(mb); cudaFree(k); cudaFree(s); cudaFree(u); cudaFree(o);
    cudaFree(hist); cudaFree(nruns); cudaFree(tmp);
  }
  return 0;
}
