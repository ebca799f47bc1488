//! `mindgate demo`: a scripted agent that shows every feature of the viewer.
