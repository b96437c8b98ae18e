/* petsc/spmat_petsc.h — spmat as a PETSc matrix type ("spmat"), CPU kernels.
 * SPDX-License-Identifier: MIT
 *
 *   #include <spmat_petsc.h>
 *   PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
 *   PetscCall(SpmatPetscRegister());        // or run with -dll_append .../libspmat_petsc.so
 *   ...                                      // MatCreate, MatSetFromOptions (-mat_type spmat), ...
 *
 * A "spmat" matrix is an AIJ matrix (MATSEQAIJ on one rank, MATMPIAIJ on several) for
 * everything but the products: MatSetValues, assembly, MatGetDiagonal, preconditioners and
 * MatConvert are PETSc's own. At the end of each final assembly the local diagonal block and
 * the off-diagonal (ghost-column) block are built as spmat matrices of the chosen format, and
 * MatMult, MatMultAdd, MatMultTranspose and MatMultTransposeAdd run spmat's kernels.
 *
 * Options (the matrix's prefix applies):
 *   -mat_spmat_format auto|<name>     spmat format of both blocks (default auto: the planner)
 *   -mat_spmat_options key=value,...  the format's build options (spmat formats lists them)
 *
 * Needs a PETSc with real double scalars; PetscInt may be 32 or 64 bits.
 * The header is C: C and C++ programs include it alike. */
#ifndef SPMAT_PETSC_H
#define SPMAT_PETSC_H

#include <petscmat.h>

/* The type name to give MatSetType (or -mat_type); PETSc picks the sequential or the parallel
 * kind from the communicator, like MATAIJ. */
#define MATSPMAT    "spmat"
#define MATSEQSPMAT "seqaijspmat"
#define MATMPISPMAT "mpiaijspmat"

/* Registers the matrix type "spmat" (and its sequential and parallel kinds) with PETSc. Call it
 * once after PetscInitialize; later calls do nothing. Loading the shared library with
 * -dll_append runs it too (through PetscDLLibraryRegister_spmat_petsc). */
PETSC_EXTERN PetscErrorCode SpmatPetscRegister(void);
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_spmat_petsc(void);

/* The format of both local blocks ("auto" or a registered spmat format name) and their build
 * options ("key=value,..."; "" for none); the blocks are rebuilt at the next product. Logically
 * collective: give every rank the same value. An unknown format or malformed options are refused
 * here; an option value the format refuses fails the next assembly or product. The options
 * database (-mat_spmat_format, -mat_spmat_options) is read by MatSetFromOptions, and at assembly
 * where neither these calls nor MatSetFromOptions set a value. */
PETSC_EXTERN PetscErrorCode MatSpmatSetFormat(Mat, const char format[]);
PETSC_EXTERN PetscErrorCode MatSpmatSetOptions(Mat, const char options[]);

/* The format this rank's blocks run SpMV with: the chosen format itself for "auto" ("csr",
 * "sell", ...), "none" for a block without entries. The strings live as long as the blocks (until
 * the next assembly changes them). Collective: it brings the blocks up to date first. */
PETSC_EXTERN PetscErrorCode MatSpmatGetLocalFormats(Mat, const char *diagonal[], const char *offdiagonal[]);

#endif
