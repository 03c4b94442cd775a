// An actor: a class deriving from swarm::actor, whose methods run one call at a time and
// keep state between calls. A crash (swarm::actor_failure) restarts it fresh.
#include <cstdio>
#include <string>

#include "framework/swarm.hpp"

class bank_account : public swarm::actor {
public:
  explicit bank_account(long opening) : balance_(opening) {}

  long deposit(long amount) {
    if (amount < 0)
      throw std::invalid_argument("negative deposit"); // fails this call only
    balance_ += amount;
    return balance_;
  }

  long balance() const { return balance_; }

  void corrupt() { throw swarm::actor_failure("ledger corrupted"); } // crashes the actor

  void on_restart(const swarm::error& cause) override {
    std::printf("restarted after: %s\n", cause.message.c_str());
  }

private:
  long balance_;
};

int main() {
  swarm::application app;
  auto account_t = app.actor_type<bank_account>("bank_account");
  swarm::runtime rt{app};

  swarm::actor_options opts;
  opts.max_restarts = 1;
  auto acct = rt.spawn(opts, account_t, 100L);
  acct.call(&bank_account::deposit, 50L);
  auto bad = acct.call(&bank_account::deposit, -5L).get();
  std::printf("bad deposit: %s\n", bad.err().to_string().c_str());
  long after = acct.call(&bank_account::balance).get().value();
  std::printf("balance = %ld\n", after);

  acct.call(&bank_account::corrupt);
  long fresh = acct.call(&bank_account::balance).get().value();
  std::printf("balance after restart = %ld\n", fresh);
  return (after == 150 && fresh == 100 && !bad) ? 0 : 1;
}
