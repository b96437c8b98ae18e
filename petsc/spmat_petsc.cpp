// petsc/spmat_petsc.cpp — the PETSc matrix type "spmat": an AIJ matrix whose products run on spmat.
// SPDX-License-Identifier: MIT
//
// What is PETSc's and what is spmat's:
//   * The matrix is created as PETSc's own SeqAIJ or MPIAIJ (MatCreate_SeqAIJ/MatCreate_MPIAIJ,
//     the constructors PETSc's AIJ subtypes build on) and renamed "seqaijspmat"/"mpiaijspmat".
//     The names start with the AIJ names on purpose: PETSc's AIJ routines (MatMPIAIJGetSeqAIJ,
//     factorizations, MatGetDiagonalBlock, ...) accept a matrix whose type name begins with
//     theirs, so assembly, preconditioners and MatGetDiagonal keep working unchanged.
//   * After each final assembly the local blocks are read through public calls (MatGetRowIJ,
//     MatSeqAIJGetArrayRead, MatMPIAIJGetSeqAIJ and its garray) into spmat::Csr and built as
//     spmat::Matrix<double> of the chosen format on the CPU backend.
//   * MatMult and friends are replaced through MatSetOperation. The ghost exchange is a
//     VecScatter from the global x to a local vector of the garray columns: the forward scatter
//     is in flight while the diagonal block multiplies; the transposed products add the
//     off-diagonal part back with a reverse scatter (ADD_VALUES).
//   * Values or structure changed in any way PETSc tracks (assembly, MatScale, MatShift,
//     MatSeqAIJRestoreArray, ...) bump an object state; each product compares the states it
//     built from and refreshes the blocks first (update_values in place where the format can,
//     else a rebuild), so a stale block is never multiplied.
#include "spmat_petsc.h"

#include <petscvec.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/error.hpp"
#include "spmat/core/options.hpp"
#include "spmat/matrix.hpp"

static_assert(std::is_same_v<PetscScalar, double>,
              "spmat's PETSc matrix type needs a PETSc built with real double scalars "
              "(--with-scalar-type=real --with-precision=double)");
static_assert(sizeof(PetscInt) == 4 || sizeof(PetscInt) == 8, "PetscInt must be 32 or 64 bits");

// The registered constructors of PETSc's AIJ types. They are exported library symbols (every AIJ
// subtype inside PETSc, e.g. aijcusparse and aijkokkos, is built on them) but installed headers
// do not declare them. Calling them rather than MatSetType(A, MATSEQAIJ) matters: MatSetType
// returns early when the object still carries the type name it had before, which is the case
// inside a constructor.
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);
// A documented PETSc function ("Level: advanced") whose prototype sits in the header for
// implementers of PETSc types (petsc/private/petscimpl.h); declared here so that nothing else of
// that header's internals is used.
PETSC_EXTERN PetscErrorCode PetscObjectStateGet(PetscObject, PetscObjectState*);

namespace {

using Index = std::conditional_t<sizeof(PetscInt) == 8, std::int64_t, std::int32_t>;
constexpr const char* kDataKey = "SpmatPetscData";

// One local block as spmat holds it; `m` is empty for a block without entries (nothing to
// multiply, and some formats refuse an empty matrix).
struct Block {
  std::optional<spmat::Matrix<double>> m;
  PetscInt rows = 0, cols = 0, nnz = 0;
  // The off-diagonal block has entries in few rows (those coupled to other ranks: a surface of
  // a volume). It is stored with only those rows, row_map naming each one's local row, like
  // PETSc's compressed-row AIJ; otherwise every product would read and write all of y for it.
  std::vector<PetscInt> row_map;  // empty: all rows stored
  mutable std::vector<double> work;  // the compressed rows' part of y (or of x for Aᵀ)
  PetscObjectState nonzero_state = -1;
  std::string spmv_format = "none", spmv_t_format = "none";

  void describe_formats() {
    spmv_format = spmv_t_format = "none";
    if (!m) return;
    const std::string name(m->format_name());
    spmv_format = spmv_t_format = name;
    if (const spmat::FormatPlan* p = m->plan()) {
      if (const auto* c = p->choice(spmat::Op::spmv)) spmv_format = c->format;
      if (const auto* c = p->choice(spmat::Op::spmv_t))
        spmv_t_format = c->format + (c->transposed ? " (stored transpose)" : "");
    }
  }
};

struct Data {
  std::string format = "auto";
  std::string options;
  bool format_given = false;   // by MatSpmatSetFormat or the options database
  bool options_given = false;  // by MatSpmatSetOptions or the options database
  Block diag, offdiag;
  // Parallel only: the ghost columns (global indices) and the scatter that fetches them.
  std::vector<PetscInt> garray;
  Vec ghosts = nullptr;
  VecScatter scatter = nullptr;
  // The object states of the matrix and of its local blocks when the spmat blocks were made.
  PetscObjectState state[3] = {-1, -1, -1};
  // MPIAIJ's nonzero state is the same on every rank (a sum over the ranks at assembly), so
  // deciding the collective scatter rebuild on it keeps the ranks in step.
  PetscObjectState scatter_nonzero_state = -1;
  bool rebuild = false;  // a new format or options: build again even where values would do
  // AIJ's own operations, called before or instead of ours.
  PetscErrorCode (*aij_assemblyend)(Mat, MatAssemblyType) = nullptr;
  PetscErrorCode (*aij_view)(Mat, PetscViewer) = nullptr;
  PetscErrorCode (*aij_setfromoptions)(Mat, PetscOptionItems*) = nullptr;

  /// After a new format or options: the blocks are built again at the next product.
  void rebuild_at_next_product() {
    rebuild = true;
    state[0] = -1;
  }

  ~Data() {
    // Destroy errors cannot be reported from here; PETSc logs them itself.
    (void)VecScatterDestroy(&scatter);
    (void)VecDestroy(&ghosts);
  }
};

PetscErrorCode destroy_data(void* p) {
  PetscFunctionBegin;
  delete static_cast<Data*>(p);
  PetscFunctionReturn(0);
}

const char* type_name(Mat A) {
  const char* t = nullptr;
  return PetscObjectGetType((PetscObject)A, &t) == 0 && t ? t : "(none)";
}

PetscErrorCode get_data(Mat A, Data** data) {
  PetscContainer c = nullptr;
  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, kDataKey, (PetscObject*)&c));
  PetscCheck(c, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG,
             "matrix of type %s is not a spmat matrix", type_name(A));
  PetscCall(PetscContainerGetPointer(c, (void**)data));
  PetscFunctionReturn(0);
}

PetscErrorCode is_parallel(Mat A, PetscBool* mpi) {
  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(type_name(A), MATMPIAIJ, mpi));
  PetscFunctionReturn(0);
}

// spmat reports everything it refuses as an exception; PETSc callers expect an error code with a
// message, never an exception through their C frames. The error is this rank's own (another rank
// may have built its block fine), hence PETSC_COMM_SELF: PETSc prints it from this rank.
#define SPMAT_TRY try {
#define SPMAT_CATCH                                                                         \
  }                                                                                         \
  catch (const std::exception& e) {                                                         \
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "spmat: %s", e.what());                         \
  }                                                                                         \
  catch (...) {                                                                             \
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "spmat: unknown exception");                   \
  }

// The options database's -mat_spmat_format / -mat_spmat_options, unless given through the API.
PetscErrorCode read_options_database(Mat A, Data* d) {
  char buf[1024];
  PetscBool set = PETSC_FALSE;
  PetscOptions options = nullptr;
  const char* prefix = nullptr;
  PetscFunctionBegin;
  PetscCall(PetscObjectGetOptions((PetscObject)A, &options));
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)A, &prefix));
  if (!d->format_given) {
    PetscCall(PetscOptionsGetString(options, prefix,
                                    "-mat_spmat_format", buf, sizeof(buf), &set));
    if (set) d->format = buf;
  }
  if (!d->options_given) {
    PetscCall(PetscOptionsGetString(options, prefix,
                                    "-mat_spmat_options", buf, sizeof(buf), &set));
    if (set) d->options = buf;
  }
  PetscFunctionReturn(0);
}

// Reads a SeqAIJ block into `b`: values only (update_values) when its nonzero structure is the
// one `b` was built from and the format takes new values in place, else a full build.
PetscErrorCode refresh_block(Mat A, Mat M, Data* d, Block& b, bool compress_rows) {
  PetscInt m = 0, n = 0, rows = 0;
  const PetscInt *ia = nullptr, *ja = nullptr;
  const PetscScalar* values = nullptr;
  PetscBool done = PETSC_FALSE;
  PetscObjectState nz_state;
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  PetscFunctionBegin;
  PetscCall(MatGetSize(M, &m, &n));
  PetscCall(MatGetNonzeroState(M, &nz_state));
  PetscCall(MatGetRowIJ(M, 0, PETSC_FALSE, PETSC_FALSE, &rows, &ia, &ja, &done));
  PetscCheck(done, comm, PETSC_ERR_SUP, "spmat: MatGetRowIJ gave no CSR arrays for a local block");
  PetscCheck(rows == m, comm, PETSC_ERR_PLIB, "spmat: MatGetRowIJ gave %" PetscInt_FMT " rows, expected %" PetscInt_FMT, rows, m);
  PetscCall(MatSeqAIJGetArrayRead(M, &values));
  const PetscInt nnz = ia[m];
  bool updated = false;
  std::string error;  // reported after the arrays are given back
  try {
    if (b.m && !d->rebuild && nz_state == b.nonzero_state && b.rows == m && b.cols == n &&
        b.nnz == nnz) {
      try {
        b.m->update_values(std::span<const double>(values, static_cast<std::size_t>(nnz)));
        updated = true;
      } catch (const spmat::UnsupportedError&) {
        // The format cannot take new values in place: rebuilt below.
      }
    }
    if (!updated) {
      b.m.reset();
      b.rows = m;
      b.cols = n;
      b.nnz = nnz;
      b.nonzero_state = nz_state;
      b.row_map.clear();
      if (m > 0 && n > 0 && nnz > 0) {
        spmat::Csr<double, Index> csr;
        PetscInt nonempty = 0;
        for (PetscInt i = 0; i < m; ++i) nonempty += ia[i + 1] > ia[i];
        // PETSc's own threshold for compressed rows (MatCheckCompressedRow's ratio 0.6).
        if (compress_rows && nonempty < 0.6 * m) {
          b.row_map.reserve(nonempty);
          csr.row_ptr.reserve(nonempty + 1);
          for (PetscInt i = 0; i < m; ++i)
            if (ia[i + 1] > ia[i]) {
              b.row_map.push_back(i);
              csr.row_ptr.push_back(static_cast<Index>(ia[i + 1]));
            }
          b.work.assign(nonempty, 0.0);
          csr.rows = static_cast<Index>(nonempty);
        } else {
          csr.rows = static_cast<Index>(m);
          csr.row_ptr.assign(ia, ia + m + 1);
        }
        csr.cols = static_cast<Index>(n);
        csr.col_idx.assign(ja, ja + nnz);
        csr.values.assign(values, values + nnz);
        b.m = spmat::Matrix<double>::build(csr, d->format, spmat::Backend::cpu,
                                           spmat::FormatOptions::parse(d->options));
      }
      b.describe_formats();
    }
  } catch (const std::exception& e) {
    error = e.what();
    b.m.reset();  // never multiply a block half replaced
    b.nonzero_state = -1;
  } catch (...) {
    error = "unknown exception";
    b.m.reset();
    b.nonzero_state = -1;
  }
  PetscCall(MatSeqAIJRestoreArrayRead(M, &values));
  PetscCall(MatRestoreRowIJ(M, 0, PETSC_FALSE, PETSC_FALSE, &rows, &ia, &ja, &done));
  PetscCheck(error.empty(), PETSC_COMM_SELF, PETSC_ERR_LIB, "spmat: %s", error.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode local_blocks(Mat A, Mat* Ad, Mat* Ao, const PetscInt** garray) {
  PetscBool mpi;
  PetscFunctionBegin;
  PetscCall(is_parallel(A, &mpi));
  if (mpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray));
  } else {
    *Ad = A;
    *Ao = nullptr;
    *garray = nullptr;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode current_states(Mat A, Mat Ad, Mat Ao, PetscObjectState s[3]) {
  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &s[0]));
  s[1] = s[2] = 0;
  if (Ad != A) PetscCall(PetscObjectStateGet((PetscObject)Ad, &s[1]));
  if (Ao) PetscCall(PetscObjectStateGet((PetscObject)Ao, &s[2]));
  PetscFunctionReturn(0);
}

// Brings the spmat blocks and the ghost scatter up to date with the AIJ data. `collective`: every
// rank of the matrix is here (assembly, MatScale, ... changed the matrix's own state); a block
// that fails to build on one rank then fails the call on every rank, instead of leaving the
// others waiting in the next collective call. A refresh for a change of one rank's local block
// alone (MatSeqAIJRestoreArray on it) is that rank's own affair.
PetscErrorCode refresh(Mat A, Data* d, bool collective) {
  Mat Ad = nullptr, Ao = nullptr;
  const PetscInt* garray = nullptr;
  PetscErrorCode ierr = 0;
  PetscFunctionBegin;
  PetscCall(read_options_database(A, d));
  PetscCall(local_blocks(A, &Ad, &Ao, &garray));
  ierr = refresh_block(A, Ad, d, d->diag, false);
  if (!ierr && Ao) ierr = refresh_block(A, Ao, d, d->offdiag, true);
  if (collective) {
    PetscMPIInt failed_here = ierr ? 1 : 0, failed_any = 0;
    PetscCallMPI(MPI_Allreduce(&failed_here, &failed_any, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
    PetscCall(ierr);
    PetscCheck(!failed_any, PETSC_COMM_SELF, PETSC_ERR_LIB,
               "spmat: building a local block failed on another rank (its error says why)");
  } else {
    PetscCall(ierr);
  }
  if (Ao) {
    PetscObjectState nz_state;
    PetscCall(MatGetNonzeroState(A, &nz_state));
    // The ghost columns change only with the structure (the off-diagonal block's columns are
    // renumbered to 0..nghost-1 at each assembly that changes it).
    if (!d->scatter || nz_state != d->scatter_nonzero_state) {
      d->scatter_nonzero_state = nz_state;
      const PetscInt nghost = d->offdiag.cols;
      IS from = nullptr;
      Vec x = nullptr;
      d->garray.assign(garray, garray + nghost);
      PetscCall(VecScatterDestroy(&d->scatter));
      PetscCall(VecDestroy(&d->ghosts));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &d->ghosts));
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, d->garray.data(), PETSC_USE_POINTER, &from));
      PetscCall(MatCreateVecs(A, &x, nullptr));
      PetscCall(VecScatterCreate(x, from, d->ghosts, nullptr, &d->scatter));
      PetscCall(VecDestroy(&x));
      PetscCall(ISDestroy(&from));
    }
  }
  PetscCall(current_states(A, Ad, Ao, d->state));
  d->rebuild = false;
  PetscFunctionReturn(0);
}

PetscErrorCode ensure_current(Mat A, Data** data) {
  Mat Ad = nullptr, Ao = nullptr;
  const PetscInt* garray = nullptr;
  PetscObjectState s[3];
  PetscFunctionBegin;
  PetscCall(get_data(A, data));
  PetscCall(local_blocks(A, &Ad, &Ao, &garray));
  PetscCall(current_states(A, Ad, Ao, s));
  if (s[0] != (*data)->state[0]) PetscCall(refresh(A, *data, true));
  else if (s[1] != (*data)->state[1] || s[2] != (*data)->state[2]) PetscCall(refresh(A, *data, false));
  PetscFunctionReturn(0);
}

// Runs body(in, out) on the local arrays of `in` (read) and `out` (read and written, or only
// written when `overwrites_out`: PETSc then need not provide its current values), with spmat's
// exceptions turned into PETSc errors.
template <class Body>
PetscErrorCode on_local_arrays(Vec in, Vec out, bool overwrites_out, Body&& body) {
  const PetscScalar* ia = nullptr;
  PetscScalar* oa = nullptr;
  PetscInt ni, no;
  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(in, &ni));
  PetscCall(VecGetLocalSize(out, &no));
  PetscCall(VecGetArrayRead(in, &ia));
  if (overwrites_out) PetscCall(VecGetArrayWrite(out, &oa));
  else PetscCall(VecGetArray(out, &oa));
  SPMAT_TRY
  body(std::span<const double>(ia, static_cast<std::size_t>(ni)),
       std::span<double>(oa, static_cast<std::size_t>(no)));
  SPMAT_CATCH
  if (overwrites_out) PetscCall(VecRestoreArrayWrite(out, &oa));
  else PetscCall(VecRestoreArray(out, &oa));
  PetscCall(VecRestoreArrayRead(in, &ia));
  PetscFunctionReturn(0);
}

// y = Ad x + beta y over the local rows (the diagonal block; zero when it has no entries).
PetscErrorCode diag_product(const Block& b, Vec x, Vec y, double beta, bool transpose) {
  PetscFunctionBegin;
  PetscCall(on_local_arrays(x, y, false, [&](std::span<const double> xs, std::span<double> ys) {
    if (b.m) {
      if (transpose) b.m->spmv_t(xs, ys, 1.0, beta);
      else b.m->spmv(xs, ys, 1.0, beta);
    } else if (beta == 0.0) {
      std::fill(ys.begin(), ys.end(), 0.0);
    }
  }));
  PetscFunctionReturn(0);
}

// The off-diagonal block's product, through the compressed rows where Ao has them: out += Ao in
// (in: the ghost values), or with Transposed out = Aoᵀ in (out: the ghost values).
template <bool Transposed>
PetscErrorCode offdiag_product(const Block& b, Vec in, Vec out) {
  PetscFunctionBegin;
  if (b.row_map.empty()) {
    PetscCall(diag_product(b, in, out, Transposed ? 0.0 : 1.0, Transposed));
    PetscFunctionReturn(0);
  }
  auto product = [&](std::span<const double> i, std::span<double> o) {
    if constexpr (Transposed) {
      for (std::size_t k = 0; k < b.row_map.size(); ++k) b.work[k] = i[b.row_map[k]];
      b.m->spmv_t(b.work, o);
    } else {
      b.m->spmv(i, b.work);
      for (std::size_t k = 0; k < b.row_map.size(); ++k) o[b.row_map[k]] += b.work[k];
    }
  };
  PetscCall(on_local_arrays(in, out, Transposed, product));
  PetscFunctionReturn(0);
}

// y = op(A) x + beta y (beta is 0 or 1), op(A) = A or Aᵀ. A x: the ghost scatter runs while the
// diagonal block multiplies. Aᵀ x: the off-diagonal block's product goes to the ghost vector and
// is added to its owners' entries of y by the reverse scatter, after the diagonal block wrote y.
template <bool Transposed>
PetscErrorCode mult(Mat A, Vec x, Vec y, double beta) {
  Data* d = nullptr;
  PetscBool mpi;
  PetscFunctionBegin;
  PetscCall(ensure_current(A, &d));
  PetscCall(is_parallel(A, &mpi));
  if (!mpi) {
    PetscCall(diag_product(d->diag, x, y, beta, Transposed));
    PetscFunctionReturn(0);
  }
  if constexpr (Transposed) {
    if (d->offdiag.m) PetscCall(offdiag_product<true>(d->offdiag, x, d->ghosts));
    else PetscCall(VecZeroEntries(d->ghosts));
    PetscCall(diag_product(d->diag, x, y, beta, true));
    PetscCall(VecScatterBegin(d->scatter, d->ghosts, y, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(d->scatter, d->ghosts, y, ADD_VALUES, SCATTER_REVERSE));
  } else {
    PetscCall(VecScatterBegin(d->scatter, x, d->ghosts, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(diag_product(d->diag, x, y, beta, false));
    PetscCall(VecScatterEnd(d->scatter, x, d->ghosts, INSERT_VALUES, SCATTER_FORWARD));
    if (d->offdiag.m) PetscCall(offdiag_product<false>(d->offdiag, d->ghosts, y));
  }
  PetscFunctionReturn(0);
}

// y = op(A) x: MatMult, MatMultTranspose.
template <bool Transposed>
PetscErrorCode MatMult_Spmat(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(mult<Transposed>(A, x, y, 0.0));
  PetscFunctionReturn(0);
}

// z = y + op(A) x: MatMultAdd, MatMultTransposeAdd.
template <bool Transposed>
PetscErrorCode MatMultAdd_Spmat(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  if (z != y) PetscCall(VecCopy(y, z));
  PetscCall(mult<Transposed>(A, x, z, 1.0));
  PetscFunctionReturn(0);
}

PetscErrorCode MatAssemblyEnd_Spmat(Mat A, MatAssemblyType type) {
  Data* d = nullptr;
  PetscFunctionBegin;
  PetscCall(get_data(A, &d));
  PetscCall(d->aij_assemblyend(A, type));
  if (type == MAT_FINAL_ASSEMBLY) {
    // Built here rather than at the first product so that -mat_view (run by MatAssemblyEnd)
    // names the formats and build errors surface at assembly.
    PetscCall(refresh(A, d, true));
    // MatAssemblyEnd bumps the matrix's state once more after this returns; expecting it
    // avoids a second refresh at the first product (a wrong guess would only cost one).
    d->state[0] += 1;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MatView_Spmat(Mat A, PetscViewer viewer) {
  Data* d = nullptr;
  PetscBool ascii = PETSC_FALSE;
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  PetscBool assembled = PETSC_FALSE;
  PetscCall(MatAssembled(A, &assembled));
  if (ascii && assembled) {
    PetscViewerFormat format;
    PetscCall(PetscViewerGetFormat(viewer, &format));
    if (format != PETSC_VIEWER_ASCII_MATLAB && format != PETSC_VIEWER_ASCII_MATRIXMARKET &&
        format != PETSC_VIEWER_ASCII_CSV) {
      PetscBool mpi;
      PetscMPIInt rank;
      PetscCall(ensure_current(A, &d));
      PetscCall(is_parallel(A, &mpi));
      PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
      PetscCall(PetscViewerASCIIPrintf(viewer, "spmat format %s%s%s, local blocks per rank:\n",
                                       d->format.c_str(), d->options.empty() ? "" : " with ",
                                       d->options.c_str()));
      PetscCall(PetscViewerASCIIPushSynchronized(viewer));
      auto line = [&](const char* what, const Block& b) -> PetscErrorCode {
        PetscFunctionBegin;
        char stored[64] = "";
        if (!b.row_map.empty())
          PetscCall(PetscSNPrintf(stored, sizeof(stored), " (stored as its %zu nonempty rows)", b.row_map.size()));
        PetscCall(PetscViewerASCIISynchronizedPrintf(
            viewer,
            "  [%d] %s %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT
            " nonzeros%s: Ax %s, A^T x %s\n",
            rank, what, b.rows, b.cols, b.nnz, stored, b.spmv_format.c_str(), b.spmv_t_format.c_str()));
        PetscFunctionReturn(0);
      };
      PetscCall(line(mpi ? "diagonal block" : "matrix", d->diag));
      if (mpi) PetscCall(line("off-diagonal block", d->offdiag));
      PetscCall(PetscViewerFlush(viewer));
      PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    }
  }
  PetscCall(get_data(A, &d));
  if (d->aij_view) PetscCall(d->aij_view(A, viewer));
  PetscFunctionReturn(0);
}

PetscErrorCode MatSetFromOptions_Spmat(Mat A, PetscOptionItems* PetscOptionsObject) {
  Data* d = nullptr;
  char buf[1024];
  PetscBool set = PETSC_FALSE;
  PetscFunctionBegin;
  PetscCall(get_data(A, &d));
  if (d->aij_setfromoptions) PetscCall(d->aij_setfromoptions(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "spmat matrix options");
  PetscCall(PetscStrncpy(buf, d->format.c_str(), sizeof(buf)));
  PetscCall(PetscOptionsString("-mat_spmat_format",
                               "spmat format of the local blocks (auto: the planner chooses)",
                               "MatSpmatSetFormat", buf, buf, sizeof(buf), &set));
  if (set) {
    d->format = buf;
    d->format_given = true;
  }
  PetscCall(PetscStrncpy(buf, d->options.c_str(), sizeof(buf)));
  PetscCall(PetscOptionsString("-mat_spmat_options", "the format's build options, key=value,...",
                               "MatSpmatSetOptions", buf, buf, sizeof(buf), &set));
  if (set) {
    d->options = buf;
    d->options_given = true;
  }
  PetscOptionsHeadEnd();
  // A new format applies to blocks already built as well.
  if (d->format_given || d->options_given) d->rebuild_at_next_product();
  PetscFunctionReturn(0);
}

// Turns the SeqAIJ or MPIAIJ matrix B into its spmat kind, in place.
PetscErrorCode make_spmat(Mat B) {
  PetscBool mpi;
  PetscContainer c = nullptr;
  PetscFunctionBegin;
  PetscCall(is_parallel(B, &mpi));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, mpi ? MATMPISPMAT : MATSEQSPMAT));
  PetscCall(PetscObjectQuery((PetscObject)B, kDataKey, (PetscObject*)&c));
  if (!c) {
    auto* d = new Data;
    PetscCall(MatGetOperation(B, MATOP_ASSEMBLY_END, (void (**)(void)) & d->aij_assemblyend));
    PetscCall(MatGetOperation(B, MATOP_VIEW, (void (**)(void)) & d->aij_view));
    PetscCall(MatGetOperation(B, MATOP_SET_FROM_OPTIONS, (void (**)(void)) & d->aij_setfromoptions));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, d));
    PetscCall(PetscContainerSetUserDestroy(c, destroy_data));
    PetscCall(PetscObjectCompose((PetscObject)B, kDataKey, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));  // B holds the reference now
  }
  PetscCall(MatSetOperation(B, MATOP_ASSEMBLY_END, (void (*)(void))MatAssemblyEnd_Spmat));
  PetscCall(MatSetOperation(B, MATOP_VIEW, (void (*)(void))MatView_Spmat));
  PetscCall(MatSetOperation(B, MATOP_SET_FROM_OPTIONS, (void (*)(void))MatSetFromOptions_Spmat));
  PetscCall(MatSetOperation(B, MATOP_MULT, (void (*)(void))MatMult_Spmat<false>));
  PetscCall(MatSetOperation(B, MATOP_MULT_ADD, (void (*)(void))MatMultAdd_Spmat<false>));
  PetscCall(MatSetOperation(B, MATOP_MULT_TRANSPOSE, (void (*)(void))MatMult_Spmat<true>));
  PetscCall(MatSetOperation(B, MATOP_MULT_TRANSPOSE_ADD, (void (*)(void))MatMultAdd_Spmat<true>));
  PetscFunctionReturn(0);
}

// MatConvert from AIJ (MatConvert finds it on a new matrix of the target type).
PetscErrorCode MatConvert_AIJ_Spmat(Mat A, MatType, MatReuse reuse, Mat* newmat) {
  PetscBool assembled = PETSC_FALSE;
  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    // *newmat is a spmat matrix already; the new values reach it through its state.
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(0);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  PetscCall(make_spmat(*newmat));
  PetscCall(MatAssembled(*newmat, &assembled));
  if (assembled) {
    Data* d = nullptr;
    PetscCall(get_data(*newmat, &d));
    PetscCall(refresh(*newmat, d, true));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode compose_converters(Mat B) {
  PetscFunctionBegin;
  // MatConvert looks for MatConvert_<from>_<to>_C with <to> as requested (the root name, or a
  // seq/mpi prefix of it) and our own kind names.
  for (const char* from : {MATSEQAIJ, MATMPIAIJ}) {
    for (const char* to : {MATSPMAT, "seqspmat", "mpispmat", MATSEQSPMAT, MATMPISPMAT}) {
      char name[256];
      PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", from, to));
      PetscCall(PetscObjectComposeFunction((PetscObject)B, name, MatConvert_AIJ_Spmat));
    }
  }
  PetscFunctionReturn(0);
}

// The constructor of a spmat type: PETSc's AIJ constructor `create_aij`, then spmat's operations.
template <PetscErrorCode (*create_aij)(Mat)>
PetscErrorCode MatCreate_AIJSpmat(Mat A) {
  PetscFunctionBegin;
  PetscCall(create_aij(A));
  PetscCall(make_spmat(A));
  PetscCall(compose_converters(A));
  PetscFunctionReturn(0);
}

PetscBool registered = PETSC_FALSE;

PetscErrorCode forget_registration() {
  PetscFunctionBegin;
  registered = PETSC_FALSE;  // PetscFinalize empties the type list; a new PetscInitialize needs it again
  PetscFunctionReturn(0);
}

PetscErrorCode check_spmat(Mat A) {
  PetscBool seq = PETSC_FALSE, mpi = PETSC_FALSE;
  PetscFunctionBegin;
  PetscCheck(A, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "spmat: null matrix");
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQSPMAT, &seq));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPISPMAT, &mpi));
  PetscCheck(seq || mpi, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG,
             "matrix of type %s is not a spmat matrix (MatSetType(A, \"spmat\") first)",
             type_name(A));
  PetscFunctionReturn(0);
}

// The data of A, after check_spmat.
PetscErrorCode checked_data(Mat A, Data** d) {
  PetscFunctionBegin;
  PetscCall(check_spmat(A));
  PetscCall(get_data(A, d));
  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode SpmatPetscRegister(void) {
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(0);
  registered = PETSC_TRUE;
  PetscCall(MatRegister(MATSEQSPMAT, MatCreate_AIJSpmat<MatCreate_SeqAIJ>));
  PetscCall(MatRegister(MATMPISPMAT, MatCreate_AIJSpmat<MatCreate_MPIAIJ>));
  PetscCall(MatRegisterRootName(MATSPMAT, MATSEQSPMAT, MATMPISPMAT));
  PetscCall(PetscRegisterFinalize(forget_registration));
  PetscFunctionReturn(0);
}

PetscErrorCode PetscDLLibraryRegister_spmat_petsc(void) {
  PetscFunctionBegin;
  PetscCall(SpmatPetscRegister());
  PetscFunctionReturn(0);
}

PetscErrorCode MatSpmatSetFormat(Mat A, const char format[]) {
  Data* d = nullptr;
  PetscFunctionBegin;
  PetscCall(checked_data(A, &d));
  try {
    (void)spmat::find_format(format);  // a typo is reported here, not at the next assembly
  } catch (const std::exception& e) {
    if (std::string(format) != "auto" && std::string(format) != "tune")
      SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_UNKNOWN_TYPE, "spmat: %s", e.what());
  }
  d->format = format;
  d->format_given = true;
  d->rebuild_at_next_product();
  PetscFunctionReturn(0);
}

PetscErrorCode MatSpmatSetOptions(Mat A, const char options[]) {
  Data* d = nullptr;
  PetscFunctionBegin;
  PetscCall(checked_data(A, &d));
  SPMAT_TRY
  (void)spmat::FormatOptions::parse(options ? options : "");
  SPMAT_CATCH
  d->options = options ? options : "";
  d->options_given = true;
  d->rebuild_at_next_product();
  PetscFunctionReturn(0);
}

PetscErrorCode MatSpmatGetLocalFormats(Mat A, const char* diagonal[], const char* offdiagonal[]) {
  Data* d = nullptr;
  PetscFunctionBegin;
  PetscCall(check_spmat(A));
  PetscCall(ensure_current(A, &d));
  if (diagonal) *diagonal = d->diag.spmv_format.c_str();
  if (offdiagonal) *offdiagonal = d->offdiag.spmv_format.c_str();
  PetscFunctionReturn(0);
}
