"""A repository that links a shared folder into its Karpenter folder, and (by mistake) a folder back to
its parent: the installed console script reads the shared manifests, and the loop once, with a note."""

from __future__ import annotations

import pytest
from test_newcomer_repositories import CLASS, POOL, karpenter_gitops

pytestmark = pytest.mark.packaging


def test_linked_folders_are_read_and_a_loop_is_named(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "nodeclass.yaml").write_text(CLASS)
    (tmp_path / "karpenter" / "nested").mkdir(parents=True)
    (tmp_path / "karpenter" / "nodepool.yaml").write_text(POOL)
    (tmp_path / "karpenter" / "shared").symlink_to("../shared", target_is_directory=True)
    (tmp_path / "karpenter" / "nested" / "up").symlink_to("..", target_is_directory=True)
    code, out, err = karpenter_gitops(tmp_path, "validate", "karpenter")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("2 object(s) checked")  # the pool's class came through the link
    assert f"note: skipped karpenter/nested/up: a link to {(tmp_path / 'karpenter').resolve()}, a folder already read" in err
