// `tangle propose SPEC.values.json IMPL.values.json [--out REL]`: relations between two frameworks'
// tensors proposed from recorded values (src/equiv/propose.h), written as a relation file to review.
#pragma once

#include <string>
#include <vector>

namespace tangle::cli {

// Exit 0 when every needed spec tensor got a proposal, 1 when some did not (the file still lists them as
// comments); bad input throws InputError.
int propose(const std::string& specValues, const std::string& implValues, const std::string& out,
            const std::vector<std::string>& extra);

// `tangle propose --localize`: the first spec tensor whose values diverge (src/equiv/propose.h);
// exit 1 when there is one, 0 when every data-dependent spec tensor has a counterpart.
int localize(const std::string& specValues, const std::string& implValues);

}  // namespace tangle::cli
