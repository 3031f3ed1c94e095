"""The one facade between the pages and the engine (components/): the only package of webapp/ that
imports components. Pages, ui and the entry points reach the engine through these modules:

- engine: cached engine calls for one document (the Recipe, its pages, prompts, prompt map, usage),
  samples, task sets and strategies;
- live: one live trial (the Playground's run);
- stores: the run stores (the user's and the shipped ones), a few rows' texts, export and import;
- sharing: who sees and who controls a sweep (workspace token, browser key);
- jobs: sweeps running in the background; sweeps: a sweep's config, estimate, TOML and command;
- analysis: the statistics of Results and Compare; figures: the charts;
- published: the papers' curves (one loader); lesson: the Lesson's steps and charts;
- models: the models the sidebar offers, prices, the local model's measured speed;
- names: how a model and the source of a number are named on every chart.

Services may use session/ (the session's identity), never ui/ or a page."""
