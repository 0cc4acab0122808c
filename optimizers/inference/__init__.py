"""Inference over model hyperparameters and weights: emcee MCMC for GP hyperparameters (:mod:`.mcmc`),
univariate slice sampling (:mod:`.slice_sampling`) and the horseshoe prior (:mod:`.horseshoe`)."""
