//! Fabric sizing formulas (fat tree, leaf-spine, DGX SuperPOD). Under construction.
