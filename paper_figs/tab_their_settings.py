r"""Their setting, our stand-in LM: published watermark settings run on the package's synthetic LMs.

Each row of :data:`SETTINGS` is one published setting of an algorithm this package has: the parameters
and the decision rule an implementation or a paper states (MarkLLM's ``config/*.json``, transformers'
``WatermarkingConfig`` / ``WatermarkDetector``, the authors' papers), where it states them, the numbers it
reports and the model, data and text length they came from.  The script runs the same parameters, mapped
onto the registry's names (:func:`sims.watermarks.registry.resolve_params`), on our stand-in LMs (the
synthetic ``lfqa`` and the fitted ``smollm2-fit``) and reports, beside their numbers:

* the TPR at **their decision rule** on their statistic (the red-green z-score, SWEET's over the gated positions,
  EWD's entropy-weighted one, an exact or permutation p-value, DiPmark's :math:`\Phi = (|s|_G - \gamma n)/\sqrt n`,
  SynthID's mean g-value, PF's Gamma threshold), scored with their treatment of
  repeated (context, token) pairs, and the rate at which that rule fires on as many unwatermarked texts of
  the same LM (its empirical false-positive rate);
* the TPR at :math:`z_p \ge 4`, :math:`z_p = \Phi^{-1}(1 - p)` the z of our **exact** p-value (so
  :math:`p \le \bar\Phi(4) = 3.17 \cdot 10^{-5}` whatever the family), and at the exact :math:`p \le 10^{-6}`,
  both with each repeated (context, token) pair scored once where the family takes that dedup;
* the exact KL per token and the perplexity under the unwatermarked LM
  (:func:`sims.experiments.quality.perplexity` of :meth:`sims.lm.door.LM.token_logprobs`), beside the
  unwatermarked texts' perplexity.

Intervals: Clopper-Pearson 95 % for every rate (:func:`sims.experiments.evaluate.clopper_pearson`), Student-t
95 % over texts for the KL and perplexity means (:func:`sims.experiments.quality.t_interval`).  Texts: ``n``
watermarked texts (seed 0) and ``n`` unwatermarked ones (seed ``NULL_SEED_OFFSET``, the same key
``paper_figs._data.KEY``) of T tokens per row and LM, T = their text length where they state one, else 200;
default n = 200 (quick: V = 1000 for the preset, n = 20, T = 50).  A setting shared by two rows is drawn once.

Their numbers come from another model, another data set and their own tokenizer: only the direction of a
difference (e.g. a rule that fires more or less often on our null than its nominal level) carries over.
Where a source's number could not be retrieved the row says so (``reported`` None) rather than quote one
from memory.  A row whose setting is a detection score rather than a watermark (MarkLLM's EWD, EXP-edit) names
it (``score``, a family of :mod:`sims.detect.families.score_families`): that score gives both its rule's
statistic and the exact columns.
"""

from __future__ import annotations

import math
import pathlib
from dataclasses import dataclass

import numpy as np

from paper_figs._out import md_table, write

TITLE = "Their setting, our stand-in LM: published watermark settings and decision rules on the synthetic LMs"
LABEL = "their setting, our stand-in LM"
LMS = ("lfqa", "smollm2-fit")
FULL = dict(n=200, T=200)  #: texts per row and LM, and T where the source states no length
QUICK = dict(n=20, T=50, V=1000)
Z_RULE = 4.0  #: the z of the exact p-value reported for every row: p <= Phi-bar(4)
FPR_EXACT = 1e-6  #: the exact p-value level reported for every row
CONFIDENCE = 0.95

MARKLLM = "MarkLLM (github THU-BPM/MarkLLM, commit 112fa74)"
MARKLLM_SETUP = ("OPT-1.3B, C4, 200 new tokens (MarkLLM's README and evaluation/examples/assess_detectability.py: "
                 "multinomial sampling, no_repeat_ngram_size 4)")
PAPER = "Towards Better Statistical Understanding of Watermarking LLMs (this package's paper), Table exp_performance"
PAPER_SETUP = ("Llama-3-8B; C4 realnewslike (500 texts of > 250 tokens, each prompt its text less the last 200 tokens) and LFQA "
               "(App. datasets); T = 200 read from that cut, not restated beside the table")
PAPER_NOTE = ("Repeated (context, token) pairs: the paper does not say; its code (github ZhongzeCai/DualGA) counts each pair once in "
              "the binomial test, as the exact tests here do.")
TRANSFORMERS = "transformers 5.24.0: generation/configuration_utils.py WatermarkingConfig, generation/watermarking.py WatermarkDetector"


@dataclass(frozen=True)
class Rule:
    """A published decision rule: ``statistic op threshold`` says "watermarked".

    ``statistic``: ``"z"`` the family's z-score (red-green: :math:`(|s|_G - \\gamma n)/\\sqrt{n\\gamma(1-\\gamma)}`),
    ``"p"`` our exact p-value, ``"dip"`` DiPmark's :math:`\\Phi = (|s|_G - \\gamma n)/\\sqrt n`, ``"synthid-mean"``
    the mean g-value :math:`\\sum_{t,l} g_{t,l} / (m n)`, ``"pf-gamma"`` PF's p-value :math:`P(\\Gamma(n - h, 1) \\ge S)` of the
    EMS sum :math:`S = \\sum_t -\\ln r_t` (MarkLLM's threshold: the Gamma quantile with the context width subtracted
    from the scored count).  The family's ``"z"`` is its own: SWEET's over the gated positions only, EWD's
    entropy-weighted.
    """

    statistic: str
    op: str
    threshold: float
    text: str


@dataclass(frozen=True)
class Setting:
    """One published setting (module docstring).

    Attributes
    ----------
    name : str
        The row's name: whose setting.
    algo : str
        Our algorithm (:func:`sims.watermarks.registry.names`).
    params : dict
        Their parameters under our names, ``h`` (context width) included.
    theirs : str
        Their parameters under their names, as published.
    unmapped : str
        Their parameters with no counterpart here, and what we run instead.
    rule : Rule or None
        Their decision rule; None where it has no counterpart on our statistics.
    dedup : bool
        Their detector scores each repeated (context, token) pair once.
    source : str
        Where the setting is published (paper and table, or repository path).
    setup : str
        Their model, data and text length.
    T : int or None
        Their text length in tokens, where stated.
    reported : dict or None
        Their numbers as published; None where none could be retrieved.
    note : str
        What could not be found, and other differences.
    score : str or None
        The registered score family (:data:`sims.detect.families.score_families.SCORE_NAMES`) the row is scored
        with, rule and exact columns alike; None: the algorithm's family's default detector.
    """

    name: str
    algo: str
    params: dict
    theirs: str
    unmapped: str
    rule: Rule | None
    dedup: bool
    source: str
    setup: str
    T: int | None = None
    reported: dict | None = None
    note: str = ""
    score: str | None = None


Z4 = Rule("z", ">", 4.0, "z > 4")
SETTINGS = (
    Setting("transformers WatermarkingConfig defaults", "srl", dict(gamma=0.25, delta=2.0, h=1),
            "greenlist_ratio 0.25, bias 2.0, hashing_key 15485863, seeding_scheme lefthash, context_width 1",
            "hashing_key: our key is the same number (paper_figs._data.KEY), hashed by our PRF, not by torch.randperm",
            Rule("z", ">", 3.0, "z > 3 (WatermarkDetector.__call__ default)"), False, TRANSFORMERS,
            "none stated (any causal LM); ignore_repeated_ngrams False by default", None, None,
            "The documentation reports no detection numbers."),
    Setting("Kirchenbauer et al. 2023", "srl", dict(gamma=0.25, delta=2.0, h=1),
            "gamma 0.25, delta 2.0, previous token seeds the green list, z threshold 4",
            "their green list is a torch.randperm prefix of exactly gamma V tokens; ours per-token Bernoulli(gamma)",
            Z4, False, "Kirchenbauer, Geiping, Wen, Katz, Miers, Goldstein (ICML 2023), Sec. 6 and Table 2",
            "OPT-1.3B, C4 realnewslike, T = 200 +- 5 tokens, multinomial sampling", 200, None,
            "Their Table 2 gives TPR / FNR at z = 4 for this setting; the values could not be retrieved from the stored "
            "corpora here, so none is quoted."),
    Setting("MarkLLM KGW", "srl", dict(gamma=0.5, delta=2.0, h=1),
            "gamma 0.5, delta 2.0, hash_key 15485863, prefix_length 1, z_threshold 4.0, f_scheme time, window_scheme left",
            "f_scheme time (a product hash of the window): ours hashes the window with our PRF", Z4, False,
            f"{MARKLLM} config/KGW.json; watermark/kgw/kgw.py (is_watermarked = z_score > z_threshold)", MARKLLM_SETUP, 200, None,
            "No TPR for this configuration could be retrieved (MarkLLM's paper and README tables not in the stored corpora)."),
    Setting("MarkLLM Unigram", "unigram", dict(gamma=0.5, delta=2.0, h=0),
            "gamma 0.5, delta 2.0, hash_key 15485863, z_threshold 4.0", "", Z4, False,
            f"{MARKLLM} config/Unigram.json; Zhao, Ananth, Li, Wang (ICLR 2024) Sec. 6 (fraction 0.5, strength 2.0)",
            MARKLLM_SETUP, 200, None, "Zhao et al.'s TPR / F1 tables (GPT2-XL, OPT-1.3B, LLaMA-7B on OpenGen and LFQA) could not be "
            "retrieved here."),
    Setting("MarkLLM DiPmark", "dipmark", dict(gamma=0.5, dip_alpha=0.45, h=5),
            "gamma 0.5, alpha 0.45, key 42, prefix_length 5, z_threshold 1.513, ignore_history_generation / detection 0",
            "key 42: ours runs the package key; their permutation is torch.randperm of a seeded generator, ours the PRF's word order",
            Rule("dip", ">", 1.513, "Phi = (|s|_G - gamma n) / sqrt(n) > 1.513 (Hoeffding: FPR <= exp(-2 Phi^2) ~ 0.01)"), False,
            f"{MARKLLM} config/DIP.json; watermark/dip/dip.py; Wu, Hu, Chen, Huang, Huang (ICML 2024)", MARKLLM_SETUP, 200, None,
            "Wu et al.'s detection tables could not be retrieved here."),
    Setting("MarkLLM SynthID / transformers SynthIDTextWatermarkingConfig", "synthid", dict(m=30, candidates=2, mask_repeated=1, h=4),
            "ngram_len 5, 30 keys (depth 30), sampling_table_size 65536, sampling_table_seed 0, non-distortionary, num_leaves 2, "
            "context_history_size 1024, detector mean, threshold 0.52",
            "30 keys: ours derives the 30 layers' g-values from one key; sampling table: ours reads g-values from the PRF; "
            "context_history_size 1024: ours masks a repeated context over the whole text",
            Rule("synthid-mean", ">", 0.52, "mean g-value > 0.52"), False,
            f"{MARKLLM} config/SynthID.json, watermark/synthid/synthid.py; {TRANSFORMERS.split(':')[0]} SynthIDTextWatermarkingConfig "
            "(context_history_size 1024, sampling_table_seed 0, sampling_table_size 65536 by default; ngram_len and keys required)",
            MARKLLM_SETUP, 200, None, "Dathathri et al. (Nature 2024) report TPR at fixed FPR on Gemma models; not retrieved here."),
    Setting("MarkLLM EXP (Aaronson)", "ems", dict(tau=1.0, h=4),
            "prefix_length 4, hash_key 15485863, threshold 1e-4 (p-value), sequence_length 200", "",
            Rule("p", "<", 1e-4, "p < 1e-4 (Gamma(n, 1) tail of sum -log(1 - r), as ours)"), False,
            f"{MARKLLM} config/EXP.json; watermark/exp/exp.py", MARKLLM_SETUP, 200, None, "No TPR for this configuration retrieved."),
    Setting("MarkLLM EXPGumbel", "ems", dict(tau=0.7, h=2),
            "prefix_length 2, temperature 0.7, eps 1e-20, seed 42, threshold 1e-4 (p-value), sequence_length 200",
            "temperature 0.7 divides the logits before the Gumbel argmax: our tau (p^(1/tau)); seed 42: ours the package key",
            Rule("p", "<", 1e-4, "p < 1e-4 (Gamma tail)"), False, f"{MARKLLM} config/EXPGumbel.json; watermark/exp_gumbel/exp_gumbel.py",
            MARKLLM_SETUP, 200, None, "No TPR for this configuration retrieved."),
    Setting("MarkLLM ITSEdit (Kuditipudi et al.)", "its", dict(h=1),
            "pseudo_length 256, sequence_length 200, n_runs 500, key 42, p_threshold 0.1, top_k 0",
            "pseudo_length 256 (a key sequence of 256 uniforms, aligned by Levenshtein): ours draws u_t from the key at every "
            "position t; their permutation test with 500 resamples: our exact p of the keyed-order hits (no alignment)",
            Rule("p", "<=", 0.1, "p <= 0.1"), False, f"{MARKLLM} config/ITSEdit.json; watermark/its_edit/its_edit.py",
            MARKLLM_SETUP, 200, None, "No TPR for this configuration retrieved."),
    Setting("MarkLLM Unbiased (Hu et al.)", "uw-gamma", dict(h=5),
            "type gamma, n_grid 10, key 42, prefix_length 5, p_threshold 5e-4, ignore_history_generation / detection 1",
            "ignore_history 1 (repeated contexts left unmarked and unscored): no counterpart, ours marks and scores them; "
            "their p = n_grid exp(-max LLR) over a grid of 10: ours the exact p of the keyed-order hits",
            Rule("p", "<", 5e-4, "p < 5e-4"), False, f"{MARKLLM} config/Unbiased.json; watermark/unbiased/unbiased.py",
            MARKLLM_SETUP, 200, None, "No TPR for this configuration retrieved."),
    Setting("MarkLLM Adaptive (ATW, Liu & Bu)", "atw", dict(delta=1.5, alpha=2.0, h=1),
            "alpha 2.0, delta 1.5, delta_0 1.0, measure_threshold 50, threshold 0.8, top_k 50, top_p 0.9, repetition_penalty 1.1, "
            "measurement model gpt2-large, embedding model all-mpnet-base-v2, min / max new tokens 200 / 230",
            "delta_0 (the boost of the first 50 tokens), top-k / top-p, repetition penalty and the semantic seeding model: none here "
            "(our atw boosts by delta where the entropy exceeds alpha, green list from the previous token)",
            None, False, f"{MARKLLM} config/Adaptive.json; watermark/adaptive/adaptive.py", MARKLLM_SETUP, 200, None,
            "Their rule (normalised semantic score > 0.8) has no counterpart on our statistics: only our columns are filled."),
    Setting("paper: DualGA Delta = 0.3", "dualga", dict(Delta=0.3, h=1),
            "Delta 0.3, gamma = gamma*(Delta), eta and lambda_1 tuned on 16 samples (App. hyperparameters)",
            "eta, lambda_1: ours the package defaults (eta 0.5, lambda_1 = delta*(Delta, gamma))",
            Rule("p", "<=", 1e-4, "exact p <= 1e-4 (and 1e-6)"), True, PAPER, PAPER_SETUP, 200,
            {"C4 TPR 1e-4": 0.99, "C4 TPR 1e-6": 0.98, "C4 KL": 0.34, "LFQA TPR 1e-4": 0.98, "LFQA TPR 1e-6": 0.98, "LFQA KL": 0.31}, PAPER_NOTE),
    Setting("paper: EMS tau = 1", "ems", dict(tau=1.0, h=1),
            "tau 1", "context width not stated: ours h = 1", Rule("p", "<=", 1e-4, "exact p <= 1e-4 (and 1e-6)"), True, PAPER, PAPER_SETUP, 200,
            {"C4 TPR 1e-4": 0.90, "C4 TPR 1e-6": 0.82, "C4 KL": 1.03, "LFQA TPR 1e-4": 0.92, "LFQA TPR 1e-6": 0.87, "LFQA KL": 0.46}, PAPER_NOTE),
    Setting("paper: UW delta-reweight", "uw-delta", dict(h=1),
            "delta-reweight", "context width not stated: ours h = 1", Rule("p", "<=", 1e-4, "exact p <= 1e-4 (and 1e-6)"), True, PAPER,
            PAPER_SETUP, 200,
            {"C4 TPR 1e-4": 1.0, "C4 TPR 1e-6": 1.0, "C4 KL": 2.3, "LFQA TPR 1e-4": 1.0, "LFQA TPR 1e-6": 1.0, "LFQA KL": 2.1}, PAPER_NOTE),
    Setting("paper: UW gamma-reweight", "uw-gamma", dict(h=1),
            "gamma-reweight", "context width not stated: ours h = 1", Rule("p", "<=", 1e-4, "exact p <= 1e-4 (and 1e-6)"), True, PAPER,
            PAPER_SETUP, 200,
            {"C4 TPR 1e-4": 1.0, "C4 TPR 1e-6": 1.0, "C4 KL": 1.1, "LFQA TPR 1e-4": 1.0, "LFQA TPR 1e-6": 0.99, "LFQA KL": 1.2}, PAPER_NOTE),
    Setting("paper: ATW delta = 5, alpha = 2", "atw", dict(delta=5.0, alpha=2.0, h=1),
            "delta 5, alpha 2 (ATW's best configuration, App. baselines)", "their semantic green list: ours from the previous token",
            Rule("p", "<=", 1e-4, "exact p <= 1e-4 (and 1e-6)"), True, PAPER, PAPER_SETUP, 200,
            {"C4 TPR 1e-4": 0.99, "C4 TPR 1e-6": 0.92, "C4 KL": 0.36, "LFQA TPR 1e-4": 1.0, "LFQA TPR 1e-6": 0.96, "LFQA KL": 0.36}, PAPER_NOTE),
    Setting("MarkLLM SWEET (Lee et al.)", "sweet", dict(gamma=0.5, delta=2.0, alpha=0.9, h=1),
            "gamma 0.5, delta 2.0, hash_key 15485863, prefix_length 1, entropy_threshold 0.9, z_threshold 4.0",
            "entropy_threshold 0.9 is in nats (sweet.py: -sum p log p with torch's natural log, at generation and detection): "
            "our alpha 0.9 nats; hash_key and the product hash of the window: ours hashes the previous token with our PRF",
            Rule("z", ">", 4.0, "gated z > 4 (green count and n over the positions of entropy > 0.9 only)"), False,
            f"{MARKLLM} config/SWEET.json; watermark/sweet/sweet.py (SWEETUtils.score_sequence; is_watermarked = z_score > z_threshold)",
            MARKLLM_SETUP, 200, None, "Lee et al. (ACL 2024) report code-generation numbers (StarCoder on HumanEval and MBPP); none retrieved here."),
    Setting("MarkLLM EWD (Lu et al.): a score of KGW text", "srl", dict(gamma=0.5, delta=2.0, h=1),
            "gamma 0.5, delta 2.0, hash_key 15485863, prefix_length 1, z_threshold 4.0 (KGW's generation, EWD's detector)",
            "their weights are the spike entropies less the text's least one; ours are those rounded to 1/32 of the text's "
            "range (the lattice of our exact test: sims.detect.stats.ewd_scores); their hash of the previous token: our PRF",
            Rule("z", ">", 4.0, "entropy-weighted z > 4"), False,
            f"{MARKLLM} config/EWD.json; watermark/ewd/ewd.py (EWDUtils.score_sequence; is_watermarked = z_score > z_threshold)",
            MARKLLM_SETUP, 200, None, "The texts are the MarkLLM KGW row's (the same setting, drawn once), scored with EWD; Lu et al.'s "
            "(ACL 2024) tables not retrieved here.", score="ewd"),
    Setting("MarkLLM MorphMark (Wang et al.)", "morphmark", dict(gamma=0.5, morph_kappa=1.3, morph_p0=0.15, h=1),
            "gamma 0.5, type exp, k_linear 1.55, k_exp 1.30, k_log 2.15, p_0 0.15, ewd false, delta_ewd 1.25, hash_key 15485863, "
            "prefix_length 1, z_threshold 2.0, f_scheme time, window_scheme left",
            "type exp: r = exp(k_exp P_G) - 1, our morph_kappa 1.3 (k_linear, k_log: the other types', unused; their red mass "
            "clamped at 0 and renormalised: our r capped at 1); ewd false: the plain z; f_scheme time: our PRF hash of the window",
            Rule("z", ">", 2.0, "z > 2"), False,
            f"{MARKLLM} config/MorphMark.json; watermark/morphmark/morphmark.py (is_watermarked = z_score > z_threshold)",
            MARKLLM_SETUP, 200, None, "Wang et al. (ACL 2025) detection tables not retrieved here."),
    Setting("MarkLLM PF (Permute-and-Flip)", "pf", dict(tau=0.9, h=8),
            "ngram 8, seed 0, seeding hash, salt_key 35317, payload 0, max_seq_len 1024 (config/PF.json); temperature 0.9, "
            "top_p 1.0 and alpha 0.01: defaults of pf.py's gen_kwargs reads",
            "seed, salt_key and the hash seeding: our key and PRF hash of the 8-token window; payload 0: none here (no payload); "
            "their first ngram + 1 tokens are unscored, ours scores every token (the prompt gives the window)",
            Rule("pf-gamma", "<", 0.01, "S > Gamma(n - 8, 1) quantile 0.99 (PF.detect_watermark: k = scored - ngram)"), False,
            f"{MARKLLM} config/PF.json; watermark/pf/pf.py (PFUtils.get_threshold; detect_watermark: score > threshold)",
            MARKLLM_SETUP, 200, None, "The config states no detection threshold: the rule is detect_watermark's default alpha 0.01 "
            "with get_threshold's Gamma(n - ngram, 1) quantile (not the exact Gamma(n, 1) tail). Zhao, Li, Wang's (2024) numbers "
            "not retrieved here."),
    Setting("MarkLLM EXPEdit (Kuditipudi et al.)", "exp", dict(tau=1.0, exp_n=256, h=1),
            "pseudo_length 256, sequence_length 200, n_runs 100, key 42, p_threshold 0.2, top_k 0",
            "pseudo_length 256: our exp_n 256 (step t reads xi_{t mod 256}); their Levenshtein alignment: ours exp-edit "
            "(sims.detect.stats.exp_scores, band 32, gap 0.5 nat); their random shift of the key sequence per text: ours "
            "shift 0; n_runs 100: our 9999 fresh keys; key 42: ours the package key",
            Rule("p", "<", 0.2, "permutation p < 0.2"), False,
            f"{MARKLLM} config/EXPEdit.json; watermark/exp_edit/exp_edit.py (p = (1 + #fresh keys at least as extreme) / (n_runs + 1); "
            "is_watermarked = p_val < p_threshold)",
            MARKLLM_SETUP, 200, None, "Our p is the permutation p over 9999 fresh keys, at least 1e-4: the z_p >= 4 and p <= 1e-6 "
            "columns are 0 by construction. No TPR for this configuration retrieved.", score="exp-edit"),
    Setting("GumbelSoft (Fu et al. 2024), authors' code", "gumbelsoft", dict(gs_tau=0.3, h=3),
            "method gumbelsoftNg_t0.3 (the main experiment's): --ngram 3 --tau 0.3 --temperature 1 --top_p 1 --seeding hash "
            "--hash_key 35317 --seed 42 --max_gen_len 128",
            "hash_key 35317, seed 42 and the hash seeding: our key and PRF hash of the 3-token window; their detector's z (the "
            "sum of Gumbel values against mean 0.5772 and sd pi/sqrt(6) per token, a normal approximation): ours the exact "
            "Gamma tail of the EMS sum",
            None, False,
            "github PorUna-byte/Gumbelsoft (its readme: the code of \"GumbelSoft: Diversified Language Model Watermarking via the "
            "GumbelMax-trick\", arXiv 2402.12948), commit 07ab08c: table1.sh, wm/generator.py GumbelSoftGeneratorNg, "
            "wm/detector.py GumbelSoftDetectorNg, evaluation/eval_acc.py",
            "Llama-2-7B, C4 (their c4 prompts), 128 new tokens, scored at 40, 60, 80 and 100 tokens, 5 repetitions", 128, None,
            "Their evaluation reports AUROC and the FPR / FNR at the best threshold (eval_acc.py): no fixed rule, so only our "
            "columns are filled; the paper's tables not retrieved here."),
)
"""The published settings run here (module docstring)."""

NOT_FOUND = {
    "hard": "Kirchenbauer et al.'s hard red list (their Algorithm 1) is analysed without a default gamma or a reported TPR; none found.",
    "autocov": "DualGA-AutoCov (this package's paper, appendix) has no configuration with reported TPR beside the main table; none found.",
    "none": "the unwatermarked control: the null texts of every row.",
}
"""Registered algorithms without a published setting here, and why."""

def exact_z(log10_p) -> np.ndarray:
    r""":math:`z_p = \Phi^{-1}(1 - p)` of each exact p-value given as log10 p, computed in log space
    (:func:`scipy.special.ndtri_exp`), finite far below p = 1e-300; p = 1 gives -inf."""
    from scipy.special import ndtri_exp

    return -ndtri_exp(np.asarray(log10_p, dtype=np.float64) * math.log(10.0))


def their_statistic(rule: Rule, res, wm) -> np.ndarray:
    """The statistic of ``rule`` for each text scored as ``res`` by the detector of the watermarked generation ``wm``.

    Parameters
    ----------
    rule : Rule
        The published rule; its ``statistic`` one of :data:`STATISTICS`.
    res : DetectResult
        The texts' scores (:class:`~sims.detect.stats.scores.DetectResult`) by ``wm``'s detector or the row's score.
    wm : Generation
        The watermarked generation, whose record gives gamma (DiPmark), m (SynthID) and h (PF).

    Returns
    -------
    ndarray of float64
        One value per text (nan where the family gives none).
    """
    n = res.n_scored.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule.statistic == "z":
            return np.asarray(res.z, dtype=np.float64)
        if rule.statistic == "p":
            return np.power(10.0, res.log10_p)
        if rule.statistic == "dip":
            return (res.score - float(wm.meta["gamma"]) * n) / np.sqrt(n)
        if rule.statistic == "synthid-mean":
            return res.score / (int(wm.meta["m"]) * n)
        if rule.statistic == "pf-gamma":
            from scipy.special import gammaincc

            k = n - int(wm.meta["h"])  # their threshold's shape: the scored count less the context width (1.0 where k <= 0: never fires)
            return np.where(k > 0, gammaincc(np.maximum(k, 1.0), np.asarray(res.score, dtype=np.float64)), 1.0)
    raise ValueError(f"rule statistic must be one of {STATISTICS}; got {rule.statistic!r}")


STATISTICS = ("z", "p", "dip", "synthid-mean", "pf-gamma")  #: the statistics a :class:`Rule` may name
_OPS = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}


def decide(rule: Rule, res, wm) -> np.ndarray:
    """True where ``rule`` says "watermarked" of the texts scored as ``res`` by ``wm``'s detector (nan statistics and texts
    too short to test: False)."""
    s = their_statistic(rule, res, wm)
    return _OPS[rule.op](np.nan_to_num(s, nan=-np.inf if rule.op[0] == ">" else np.inf), rule.threshold) & ~res.too_short


def rate(hits) -> dict:
    """The share of True in ``hits`` with its Clopper-Pearson interval at :data:`CONFIDENCE`."""
    from sims.experiments.evaluate import clopper_pearson

    hits = np.asarray(hits, dtype=bool)
    k = int(hits.sum())
    return dict(k=k, n=int(hits.size), rate=k / hits.size, ci=list(clopper_pearson(k, hits.size, CONFIDENCE)))


def mean_ci(values) -> dict:
    """Mean of per-text values with its Student-t interval at :data:`CONFIDENCE`."""
    from sims.experiments.quality import t_interval

    m, lo, hi = t_interval(values, CONFIDENCE)
    return dict(mean=m, ci=[lo, hi])


class _Runs:
    """The texts and scores of one LM, each drawn or scored once however many rows share it."""

    def __init__(self, name: str, n: int, V: int | None):
        from paper_figs._data import figure_lm

        self.name, self.n, self.V = name, n, V
        self.lm = figure_lm(name, V)
        self._gen, self._score = {}, {}

    def gen(self, algo: str, T: int, seed: int = 0, **params):
        from paper_figs._data import generations

        key = (algo, T, seed, tuple(sorted(params.items())))
        if key not in self._gen:
            self._gen[key] = generations(self.name, algo, self.n, T, seed, vocab_size=self.V, **params)
        return self._gen[key]

    def null(self, gen):
        """Unwatermarked texts of the LM with ``gen``'s width, green-list ratio and kind (scored with its key)."""
        from sims.core import defaults
        from sims.experiments.evaluate import NULL_SEED_OFFSET

        m = gen.meta  # a tournament record has no green list: gamma None, the default
        return self.gen("none", gen.tokens.shape[1], NULL_SEED_OFFSET, h=m["h"], gamma=m.get("gamma"),
                        green_kind=m.get("green_kind", defaults.GREEN_KIND))

    def score(self, texts, wm, dedup: bool, score: str | None = None):
        """``texts`` (``wm`` itself or its null) scored by ``wm``'s detector with ``wm``'s parameters, or by the registered
        score family ``score`` (its boost, where it reads one, ``wm``'s record's)."""
        from sims.detect import families
        from sims.detect.families import detectors, score_families
        from sims.watermarks import registry

        algo = wm.meta["algo"]
        dedup = dedup and families.of(algo).own_dedup is None  # a family with its own repeated-context rule takes no pair dedup
        key = (id(texts), id(wm), dedup, score)
        if key not in self._score:
            if score is None:
                self._score[key] = detectors.score(texts, self.lm, dedup=dedup, algo=algo, params=wm.meta)
            else:
                boost = registry.get(algo).boost
                self._score[key] = score_families.score_generation(texts, score, self.lm, dedup=dedup, algo=algo,
                                                                   delta=None if boost is None else float(boost.lr(wm.meta)))
        return self._score[key]


def run_setting(runs: _Runs, s: Setting, T: int) -> dict:
    """Our numbers for setting ``s`` on one LM (module docstring)."""
    from sims.experiments.quality import perplexity

    gen = runs.gen(s.algo, T, **s.params)
    null = runs.null(gen)
    ours = {texts: runs.score(g, gen, True, s.score) for texts, g in (("wm", gen), ("null", null))}
    out = dict(lm=runs.name, vocab_size=int(gen.meta["vocab_size"]), n=int(gen.tokens.shape[0]), n_null=int(null.tokens.shape[0]), T=int(T),
               kl_per_token=mean_ci(gen.kl.mean(axis=1)),
               perplexity=mean_ci(perplexity(runs.lm.token_logprobs(gen), gen.lengths)),
               null_perplexity=mean_ci(perplexity(runs.lm.token_logprobs(null), null.lengths)),
               tpr_exact_z4=rate(exact_z(ours["wm"].log10_p) >= Z_RULE), fpr_exact_z4=rate(exact_z(ours["null"].log10_p) >= Z_RULE),
               tpr_exact_1e6=rate(ours["wm"].log10_p <= math.log10(FPR_EXACT)),
               z_mean=float(np.nanmean(ours["wm"].z)) if np.isfinite(ours["wm"].z).any() else None)
    if s.rule is not None:
        theirs = {texts: runs.score(g, gen, s.dedup, s.score) for texts, g in (("wm", gen), ("null", null))}
        out["tpr_their_rule"] = rate(decide(s.rule, theirs["wm"], gen))
        out["fpr_their_rule"] = rate(decide(s.rule, theirs["null"], gen))  # the watermark's m and gamma
    return out


def _cell(r: dict | None, digits: int = 2) -> str:
    if r is None:
        return "-"
    if "rate" in r:
        return f"{r['rate']:.{digits}f} [{r['ci'][0]:.{digits}f}, {r['ci'][1]:.{digits}f}]"
    return f"{r['mean']:.3g} [{r['ci'][0]:.3g}, {r['ci'][1]:.3g}]"


def _row(s: Setting, ours: list[dict]) -> dict:
    rule = None if s.rule is None else dict(statistic=s.rule.statistic, op=s.rule.op, threshold=s.rule.threshold, text=s.rule.text)
    return dict(label=LABEL, setting=s.name, algo=s.algo, params=s.params, score=s.score, theirs=s.theirs, unmapped=s.unmapped, rule=rule,
                their_dedup=s.dedup, source=s.source, their_setup=s.setup, their_T=s.T, reported=s.reported, note=s.note, ours=ours)


def main(out_dir: pathlib.Path, quick: bool, lms=None, n: int | None = None, T: int | None = None) -> list[pathlib.Path]:
    """Every row of :data:`SETTINGS` on each LM of ``lms`` (default :data:`LMS`): n = 200 texts of their T (else 200);
    quick: V = 1000, 20 x 50.  ``n`` / ``T`` override the sizes (``T`` every row's)."""
    from paper_figs._data import sized
    from sims.core.progress import progress

    size = QUICK if quick else FULL
    names = tuple(lms or LMS)
    runs = {name: _Runs(name, sized(name, n or size["n"], 1)[0], size.get("V")) for name in names}
    rows = []
    with progress(len(SETTINGS) * len(names), "tab_their_settings", unit="row") as bar:
        for s in SETTINGS:
            ours = []
            for name in names:
                ours.append(run_setting(runs[name], s, sized(name, runs[name].n, T or (size["T"] if quick else s.T or size["T"]))[1]))
                bar.update()
            rows.append(_row(s, ours))
    summary = dict(label=LABEL, lms=list(names), seed=0, null_seed_offset=_null_offset(), key=_key(), confidence=CONFIDENCE, z_rule=Z_RULE,
                   z_rule_p=_z_level(), fpr_exact=FPR_EXACT, intervals="Clopper-Pearson for rates, Student-t over texts for means",
                   rows=rows, not_found=NOT_FOUND)
    return write(out_dir, "tab_their_settings", summary, render(summary), TITLE)


def render(summary: dict) -> str:
    """The markdown of a run's ``summary`` (the JSON :func:`main` writes): one line per setting and LM, then each
    setting's source and the differences in set-up, and the registered algorithms without a published setting."""
    from paper_figs._data import display

    header = ["setting (their setting, our stand-in LM)", "ours: algo, params", "their rule", "their numbers (their model, data, T)",
              "our LM, n x T", "TPR at their rule", "their rule on our null", f"TPR z_p >= {summary['z_rule']:g}",
              f"TPR p <= {summary['fpr_exact']:g}", "KL / token", "PPL (unwatermarked)"]
    table, notes = [], []
    for r in summary["rows"]:
        rep = "none retrieved" if r["reported"] is None else ", ".join(f"{k} {v:g}" for k, v in r["reported"].items())
        rule = "no counterpart" if r["rule"] is None else r["rule"]["text"] + (" (dedup)" if r["their_dedup"] else "")
        for o in r["ours"]:
            table.append([r["setting"], f"{r['algo']} " + ", ".join(f"{k}={v:g}" for k, v in r["params"].items())
                          + (f", score {r['score']}" if r.get("score") else ""), rule,
                          f"{rep} ({r['their_setup']})", f"{display(o['lm'])}, {o['n']} x {o['T']}", _cell(o.get("tpr_their_rule")),
                          _cell(o.get("fpr_their_rule")), _cell(o["tpr_exact_z4"]), _cell(o["tpr_exact_1e6"]), _cell(o["kl_per_token"]),
                          f"{_cell(o['perplexity'])} ({_cell(o['null_perplexity'])})"])
        notes.append(f"- **{r['setting']}**: {r['source']}. Theirs: {r['theirs']}."
                     + (f" No counterpart here: {r['unmapped']}." if r["unmapped"] else "")
                     + f" Set-up: theirs {r['their_setup']}; ours " + ", ".join(f"{display(o['lm'])} (V = {o['vocab_size']})" for o in r["ours"])
                     + f", our PRF and key, T = {r['ours'][0]['T']}." + (f" {r['note']}" if r["note"] else ""))
    head = (f"Every row is labelled \"{summary['label']}\": their parameters, mapped onto ours, run on our synthetic LMs; their "
            "numbers come from their model, data and tokenizer, so only directions compare.  Seed "
            f"{summary['seed']} for the watermarked texts and seed {summary['null_seed_offset']} for as many unwatermarked texts of the "
            f"same LM, key {summary['key']}.  Rates: {summary['confidence']:.0%} Clopper-Pearson intervals; KL and perplexity: means "
            f"over texts with {summary['confidence']:.0%} Student-t intervals.  z_p = Phi^-1(1 - p) of our exact p-value (z_p >= "
            f"{summary['z_rule']:g} iff p <= {summary['z_rule_p']:.3g}); the exact columns score each repeated (context, token) pair "
            "once where the family takes that dedup; \"their rule\" scores as their detector does ((dedup): it counts pairs once) "
            "and its false-positive rate is measured on our unwatermarked texts.")
    return "\n\n".join([head, md_table(header, table), "## Sources and differences in set-up", "\n".join(notes),
                         "## Registered algorithms without a published setting here", "\n".join(f"- {k}: {v}" for k, v in summary["not_found"].items())])


def _null_offset() -> int:
    from sims.experiments.evaluate import NULL_SEED_OFFSET

    return NULL_SEED_OFFSET


def _key() -> int:
    from paper_figs._data import KEY

    return KEY


def _z_level() -> float:
    from scipy.stats import norm

    return float(norm.sf(Z_RULE))


if __name__ == "__main__":
    from paper_figs._data import run_sized

    run_sized(main, "tab_their_settings", "200 texts x their T (else 200) per row and LM")
