# agbom's example policy: deny a skill load unless data.agbom approves this pair.
#
# Input: {"skill_id": "...", "digest": "sha256:HEX", "agent_id": "...", "tenant_id": "..."}
# (agent_id and tenant_id may be left out; a scoped approval then does not match).
# data.agbom comes from agbom's bundle (agbom bundle build, or GET /v1/bundles/agbom.tar.gz).
# `verdict` gives the same answer as agbom's own store: approved, pending, denied, revoked,
# expired, out_of_scope or unknown.
package agbom.skill_load

import rego.v1

default allow := false

allow if verdict == "approved"

default verdict := "unknown"

verdict := of(data.agbom.skills[input.skill_id][input.digest])

of(record) := record.status if {
	record.status != "approved"
} else := "expired" if {
	expired(record)
} else := "out_of_scope" if {
	not in_scope(record)
} else := "signer_required" if {
	# skills approve --require-signer: only a Guardian that verifies the skill's signature
	# may allow it; a policy that cannot verify it denies.
	object.get(record, "required_signer", null) != null
} else := "approved"

# Integer nanoseconds in the data: no timestamp is parsed per decision.
expired(record) if {
	record.expires_at_ns != null
	time.now_ns() >= record.expires_at_ns
}

in_scope(record) if {
	matches(record.scope.agents, object.get(input, "agent_id", null))
	matches(record.scope.tenants, object.get(input, "tenant_id", null))
}

# No patterns: any caller. Otherwise the caller must say who it is and match one pattern.
matches(patterns, _) if count(patterns) == 0

matches(patterns, value) if {
	is_string(value)
	some pattern in patterns
	glob.match(pattern, null, value)
}
