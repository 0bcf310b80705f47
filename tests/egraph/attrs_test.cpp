#include "egraph/attrs.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace tangle::eg;

TEST(Attrs, InternSymbolsIsIdempotent) {
  Symbol a = intern("mm");
  Symbol b = intern(std::string("m") + "m");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, intern("bmm"));
  EXPECT_EQ(symbolName(a), "mm");
  EXPECT_EQ(intern(""), 0u);
}

TEST(Attrs, InternAttrListsByValue) {
  EXPECT_EQ(internAttrs({}), kNoAttrs);
  AttrList l{Attr::integer(0), Attr::ints({1, 2}), Attr::str("x"), Attr::real(0.5), Attr::boolean(true), Attr::none()};
  AttrsId id = internAttrs(l);
  EXPECT_NE(id, kNoAttrs);
  EXPECT_EQ(internAttrs(AttrList(l)), id);
  EXPECT_EQ(attrs(id), l);
  EXPECT_NE(internAttrs({Attr::integer(1)}), internAttrs({Attr::real(1.0)}));
  EXPECT_NE(internAttrs({Attr::integer(1)}), internAttrs({Attr::boolean(true)}));
}

TEST(Attrs, ToString) {
  EXPECT_EQ(Attr::integer(-3).toString(), "-3");
  EXPECT_EQ(Attr::real(0.5).toString(), "0.5");
  EXPECT_EQ(Attr::real(2.0).toString(), "2.0");
  EXPECT_EQ(Attr::boolean(false).toString(), "false");
  EXPECT_EQ(Attr::none().toString(), "none");
  EXPECT_EQ(Attr::str("D0.x").toString(), "\"D0.x\"");
  EXPECT_EQ(Attr::ints({1, 2}).toString(), "[1, 2]");
  EXPECT_EQ(toString(AttrList{Attr::integer(0), Attr::ints({})}), "0, []");
}

TEST(Attrs, ConcurrentInterningAgrees) {
  constexpr int kThreads = 4, kN = 2000;
  std::vector<std::vector<Symbol>> syms(kThreads);
  std::vector<std::vector<AttrsId>> lists(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kN; ++i) {
        syms[t].push_back(intern("concurrent_" + std::to_string(i)));
        lists[t].push_back(internAttrs({Attr::integer(i), Attr::integer(-7)}));
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) {
    EXPECT_EQ(syms[t], syms[0]);
    EXPECT_EQ(lists[t], lists[0]);
  }
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(symbolName(syms[0][i]), "concurrent_" + std::to_string(i));
    EXPECT_EQ(attrs(lists[0][i])[0].i, i);
  }
}
