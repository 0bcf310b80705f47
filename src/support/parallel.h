// parallelFor: runs f(0..n-1) on up to `jobs` threads (the caller's included).
// Used by `--jobs N` for work whose items are independent. Items are taken in
// index order; when some throw, the exception of the lowest index is rethrown
// after every thread has stopped, so the error reported is the one a
// sequential run (jobs = 1) would report first.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tangle {

template <class F>
void parallelFor(size_t n, size_t jobs, F&& f) {
  if (jobs <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(jobs, n); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tangle
