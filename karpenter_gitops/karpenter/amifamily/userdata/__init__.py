"""The userData parts families share: problems (:mod:`.problems`), MIME (:mod:`.mime`), taints
(:mod:`.taints`), the checks that hold for every family (:mod:`.common`), and the formats more than
one family reads: bootstrap.sh and kubelet calls (:mod:`.bootstrap`), NodeConfig documents
(:mod:`.nodeconfig`) and Bottlerocket's TOML settings (:mod:`.toml_settings`). Family modules never
import each other; what two of them read alike lives here."""
